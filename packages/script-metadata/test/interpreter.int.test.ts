import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DiagnosticSchema } from "@icode/workflow-errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  defaultInterpreter,
  findExecutableOnPath,
  type InterpreterResolution,
  parseScriptMetadata,
  ResolvedInterpreterSchema,
  resolvePythonSetting,
} from "../src/index";

// Real files in a temporary folder: executables are small shell scripts, permissions are set with chmod.
let root: string;

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "icode-interpreter-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let counter = 0;
/** A fresh folder under the temporary root. */
function folder(name = "case"): string {
  const dir = path.join(root, `${name}-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function file(at: string, mode = 0o755): string {
  mkdirSync(path.dirname(at), { recursive: true });
  writeFileSync(at, "#!/bin/sh\nexit 0\n");
  chmodSync(at, mode);
  return at;
}

function ok(result: InterpreterResolution) {
  expect(result.diagnostics).toEqual([]);
  expect(result.ok).toBe(true);
  return ResolvedInterpreterSchema.parse(result.interpreter);
}

function failed(result: InterpreterResolution) {
  expect(result.ok).toBe(false);
  expect(result.interpreter).toBeNull();
  expect(result.diagnostics).toHaveLength(1);
  const [found] = result.diagnostics;
  expect(DiagnosticSchema.parse(found)).toEqual(found);
  expect(found).toMatchObject({ code: "environment_invalid", stage: "environment", severity: "error" });
  expect(found!.hint).toBeTruthy();
  return found!;
}

const NO_PATH = { PATH: "" };

describe("resolvePythonSetting: [tool.chrys] python", () => {
  it("resolves a relative venv folder against the workflow's folder, keeping bin/python as a link", () => {
    const project = folder("project");
    const workflows = path.join(project, ".chrys", "workflows");
    mkdirSync(workflows, { recursive: true });
    const base = file(path.join(project, "base", "python3.12"));
    mkdirSync(path.join(project, ".venv", "bin"), { recursive: true });
    symlinkSync(base, path.join(project, ".venv", "bin", "python"));

    const interpreter = ok(resolvePythonSetting({ python: "../../.venv", baseDir: workflows, env: NO_PATH }));
    expect(interpreter).toEqual({
      kind: "user",
      command: path.join(project, ".venv", "bin", "python"),
      declared: "../../.venv",
      origin: "tool.chrys.python",
    });
  });

  it("uses bin/python3 when the folder has no bin/python", () => {
    const dir = folder();
    file(path.join(dir, "env", "bin", "python3"));
    expect(ok(resolvePythonSetting({ python: "env", baseDir: dir, env: NO_PATH })).command).toBe(
      path.join(dir, "env", "bin", "python3"),
    );
  });

  it("skips a bin/python without execute permission when bin/python3 works", () => {
    const dir = folder();
    file(path.join(dir, "env", "bin", "python"), 0o644);
    file(path.join(dir, "env", "bin", "python3"));
    expect(ok(resolvePythonSetting({ python: "./env/", baseDir: dir, env: NO_PATH })).command).toBe(
      path.join(dir, "env", "bin", "python3"),
    );
  });

  it("uses Scripts/python.exe on Windows", () => {
    const dir = folder();
    file(path.join(dir, "venv", "Scripts", "python.exe"), 0o644);
    file(path.join(dir, "venv", "bin", "python"));
    const interpreter = ok(
      resolvePythonSetting({ python: "venv", baseDir: dir, env: {}, platform: "win32" }),
    );
    expect(interpreter.command).toBe(path.join(dir, "venv", "Scripts", "python.exe"));
  });

  it("accepts an executable file, absolute or relative", () => {
    const dir = folder();
    const exe = file(path.join(dir, "tools", "python3.12"));
    expect(ok(resolvePythonSetting({ python: exe, baseDir: "/nonexistent", env: NO_PATH })).command).toBe(
      exe,
    );
    expect(ok(resolvePythonSetting({ python: "tools/python3.12", baseDir: dir, env: NO_PATH })).command).toBe(
      exe,
    );
  });

  it("expands ~ and ~/ to the home folder", () => {
    const home = folder("home");
    file(path.join(home, "venvs", "tools", "bin", "python"));
    const interpreter = ok(
      resolvePythonSetting({ python: "~/venvs/tools", baseDir: "/elsewhere", env: NO_PATH, home }),
    );
    expect(interpreter).toMatchObject({
      command: path.join(home, "venvs", "tools", "bin", "python"),
      declared: "~/venvs/tools",
    });

    file(path.join(home, "bin", "python"));
    expect(ok(resolvePythonSetting({ python: "~", baseDir: "/elsewhere", env: NO_PATH, home })).command).toBe(
      path.join(home, "bin", "python"),
    );
  });

  it("rejects ~name: only the user's own home is expanded", () => {
    const found = failed(
      resolvePythonSetting({ python: "~bob/venv", baseDir: folder(), env: NO_PATH, home: "/h" }),
    );
    expect(found.message).toContain('only "~" and "~/"');
  });

  it("reports a missing path with what it was resolved against, at the python = line", () => {
    const workflows = folder("workflows");
    const source = '# /// script\n# [tool.chrys]\n# python = "../../.venv"\n# ///\n';
    const file = path.join(workflows, "review.py");
    const { metadata, sites } = parseScriptMetadata(source, file);
    const found = failed(
      resolvePythonSetting({ python: metadata!.python, baseDir: workflows, env: NO_PATH, sites }),
    );
    const expected = path.resolve(workflows, "../../.venv");
    expect(found.message).toBe(
      `[tool.chrys] python "../../.venv" does not exist: nothing at ${expected} (relative paths are resolved against ${workflows}, the workflow's folder)`,
    );
    expect(found).toMatchObject({ file, line: 3, column: 12, source_line: '# python = "../../.venv"' });
    expect(found.hint).toContain(`python3 -m venv ${expected}`);
  });

  it("never searches PATH for a command name, but names the absolute path in the hint", () => {
    const bin = folder("bin");
    const exe = file(path.join(bin, "mypython"));
    const found = failed(resolvePythonSetting({ python: "mypython", baseDir: folder(), env: { PATH: bin } }));
    expect(found.message).toContain("does not exist");
    expect(found.hint).toBe(
      `iCode does not search PATH for commands: write the absolute path, python = ${JSON.stringify(exe)}`,
    );
  });

  it("reports a file without execute permission", () => {
    const dir = folder();
    const exe = file(path.join(dir, "python"), 0o644);
    const found = failed(resolvePythonSetting({ python: "python", baseDir: dir, env: NO_PATH }));
    expect(found.message).toBe(
      `[tool.chrys] python "python" cannot start: ${exe} is a file without execute permission (relative paths are resolved against ${dir}, the workflow's folder)`,
    );
    expect(found.hint).toContain(`chmod +x ${exe}`);
  });

  it("reports a folder without an interpreter, naming where it looked", () => {
    const dir = folder();
    mkdirSync(path.join(dir, "data"));
    const found = failed(
      resolvePythonSetting({ python: path.join(dir, "data"), baseDir: dir, env: NO_PATH }),
    );
    expect(found.message).toBe(
      `[tool.chrys] python ${JSON.stringify(path.join(dir, "data"))} is a folder without a Python interpreter: neither ${path.join(dir, "data", "bin", "python")} nor ${path.join(dir, "data", "bin", "python3")} exists`,
    );
  });

  it("reports a venv whose interpreter link is broken", () => {
    const dir = folder();
    mkdirSync(path.join(dir, ".venv", "bin"), { recursive: true });
    symlinkSync("/nonexistent/python3.99", path.join(dir, ".venv", "bin", "python"));
    const found = failed(resolvePythonSetting({ python: ".venv", baseDir: dir, env: NO_PATH }));
    expect(found.message).toContain(
      `${path.join(dir, ".venv", "bin", "python")} is a link to /nonexistent/python3.99, which does not exist`,
    );
    expect(found.hint).toContain("recreate the environment");
  });

  it("reports something that is neither a file nor a folder", () => {
    const found = failed(resolvePythonSetting({ python: "/dev/null", baseDir: folder(), env: NO_PATH }));
    expect(found.message).toContain("/dev/null is not a regular file");
  });

  it("reads process.env when no env is given, and takes the file for diagnostics from `file`", () => {
    const dir = folder();
    const exe = file(path.join(dir, ".venv", "bin", "python"));
    expect(ok(resolvePythonSetting({ python: ".venv", baseDir: dir })).command).toBe(exe);
    const found = failed(resolvePythonSetting({ python: "nope", baseDir: dir, file: "/w/review.py" }));
    expect(found).toMatchObject({ file: "/w/review.py", line: null });
  });

  it("refuses a relative baseDir, which would depend on the current folder", () => {
    expect(() => resolvePythonSetting({ python: ".venv", baseDir: "flows", env: NO_PATH })).toThrow(
      TypeError,
    );
  });

  it("falls back to the default interpreter when the workflow sets none", () => {
    const bin = folder("bin");
    const exe = file(path.join(bin, "python3"));
    expect(ok(resolvePythonSetting({ python: null, baseDir: bin, env: { PATH: bin } }))).toEqual({
      kind: "default",
      command: exe,
      declared: null,
      origin: "PATH",
    });
  });
});

describe("defaultInterpreter", () => {
  it("takes the first executable python3 on PATH, skipping ones without permission and folders", () => {
    const [noPermission, dirOnly, good, later] = ["a", "b", "c", "d"].map((name) => folder(name));
    file(path.join(noPermission!, "python3"), 0o644);
    mkdirSync(path.join(dirOnly!, "python3"));
    const exe = file(path.join(good!, "python3"));
    file(path.join(later!, "python3"));
    const env = { PATH: ["", noPermission, dirOnly, good, later].join(":") };
    expect(ok(defaultInterpreter({ env }))).toEqual({
      kind: "default",
      command: exe,
      declared: null,
      origin: "PATH",
    });
    expect(findExecutableOnPath("python3", { env })).toBe(exe);
  });

  it("ignores relative PATH entries", () => {
    const dir = folder();
    file(path.join(dir, "python3"));
    const relative = path.relative(process.cwd(), dir);
    expect(path.isAbsolute(relative)).toBe(false);
    expect(findExecutableOnPath("python3", { env: { PATH: relative } })).toBeNull();
    failed(defaultInterpreter({ env: { PATH: relative } }));
  });

  it("does not fall back to `python` on Linux and macOS", () => {
    const dir = folder();
    file(path.join(dir, "python"));
    const found = failed(defaultInterpreter({ env: { PATH: dir }, platform: "linux" }));
    expect(found.message).toBe(
      "no Python interpreter found: python3 is not on PATH and ICODE_PYTHON is not set",
    );
  });

  it("looks for python3.exe, then python.exe, on Windows, reading Path without regard to case", () => {
    const [first, second] = [folder("w1"), folder("w2")];
    const exe = file(path.join(second, "python.exe"), 0o644);
    file(path.join(first, "python3.bat"));
    const interpreter = ok(defaultInterpreter({ env: { Path: `"${first}";${second}` }, platform: "win32" }));
    expect(interpreter).toMatchObject({ command: exe, origin: "PATH" });
  });

  it("reports that nothing was found", () => {
    const found = failed(defaultInterpreter({ env: {}, file: "/w/review.py" }));
    expect(found).toMatchObject({ file: "/w/review.py", line: null });
  });

  describe("ICODE_PYTHON", () => {
    it("takes an absolute executable, before PATH", () => {
      const dir = folder();
      const exe = file(path.join(dir, "custom-python"));
      file(path.join(dir, "python3"));
      expect(ok(defaultInterpreter({ env: { ICODE_PYTHON: exe, PATH: dir } }))).toEqual({
        kind: "default",
        command: exe,
        declared: null,
        origin: "ICODE_PYTHON",
      });
    });

    it("takes a virtual environment folder", () => {
      const dir = folder();
      const exe = file(path.join(dir, ".venv", "bin", "python"));
      expect(ok(defaultInterpreter({ env: { ICODE_PYTHON: path.join(dir, ".venv") } })).command).toBe(exe);
    });

    it("looks a command name up on PATH", () => {
      const dir = folder();
      const exe = file(path.join(dir, "python3.12"));
      expect(ok(defaultInterpreter({ env: { ICODE_PYTHON: "python3.12", PATH: dir } }))).toMatchObject({
        command: exe,
        origin: "ICODE_PYTHON",
      });
    });

    it("uses the given PATH lookup", () => {
      const seen: string[] = [];
      const interpreter = ok(
        defaultInterpreter({
          env: { ICODE_PYTHON: "py" },
          pathLookup: (name) => {
            seen.push(name);
            return "/opt/py/bin/py";
          },
        }),
      );
      expect(seen).toEqual(["py"]);
      expect(interpreter.command).toBe("/opt/py/bin/py");
    });

    it("reports a command name that is not on PATH, without falling back", () => {
      const dir = folder();
      file(path.join(dir, "python3"));
      const found = failed(defaultInterpreter({ env: { ICODE_PYTHON: "python3.99", PATH: dir } }));
      expect(found.message).toBe('ICODE_PYTHON "python3.99" names a command that is not on PATH');
    });

    it("rejects a relative path", () => {
      const found = failed(defaultInterpreter({ env: { ICODE_PYTHON: ".venv/bin/python" } }));
      expect(found.message).toContain("is a relative path");
    });

    it("reports a missing or unusable absolute path", () => {
      const dir = folder();
      expect(failed(defaultInterpreter({ env: { ICODE_PYTHON: path.join(dir, "nope") } })).message).toContain(
        "does not exist",
      );
      const exe = file(path.join(dir, "python"), 0o600);
      expect(failed(defaultInterpreter({ env: { ICODE_PYTHON: exe } })).message).toContain(
        "without execute permission",
      );
    });

    it("counts as unset when empty", () => {
      const dir = folder();
      const exe = file(path.join(dir, "python3"));
      expect(ok(defaultInterpreter({ env: { ICODE_PYTHON: "", PATH: dir } }))).toMatchObject({
        command: exe,
        origin: "PATH",
      });
    });
  });
});
