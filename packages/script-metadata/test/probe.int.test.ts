import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkEnvironment,
  findExecutableOnPath,
  InterpreterInfoSchema,
  parseScriptMetadata,
  probeInterpreter,
  resolvePythonSetting,
} from "../src/index";

// Real interpreters: the machine's python3 (as a user would have it on PATH), a real venv made from it, and
// shell scripts standing in for broken interpreters.
let root: string;
let python3: string;
/** The version python3 reports by itself, to compare the probe against. */
let expected: { version_info: number[]; executable: string };

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "icode-probe-"));
  const found = findExecutableOnPath("python3", { env: process.env });
  if (found === null) throw new Error("these tests need python3 on PATH");
  python3 = found;
  expected = JSON.parse(
    execFileSync(
      python3,
      [
        "-c",
        "import json, sys; print(json.dumps({'version_info': list(sys.version_info[:3]), 'executable': sys.executable}))",
      ],
      {
        encoding: "utf8",
      },
    ),
  );
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function script(name: string, body: string): string {
  const file = path.join(root, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe("probeInterpreter", () => {
  it("reports what the python3 on PATH is", async () => {
    const { info, diagnostics } = await probeInterpreter(python3, { env: process.env });
    expect(diagnostics).toEqual([]);
    expect(InterpreterInfoSchema.parse(info)).toEqual(info);
    expect(info!.version_info).toEqual(expected.version_info);
    expect(info!.executable).toBe(expected.executable);
    expect(info!.resolved_path).toBe(realpathSync(expected.executable));
    expect(info!.version.startsWith(expected.version_info.join("."))).toBe(true);
    expect(info!.implementation).toBe("CPython");
    expect(info!.platform).toBe(process.platform);
    if (process.platform === "linux") expect(info!.libc).toMatch(/^(glibc|musl)/);
    expect(checkEnvironment(null, info!)).toEqual([]);
  });

  it("names the real binary behind a shell shim, so later starts can skip the shim", async () => {
    const shim = script("python-shim", `exec ${JSON.stringify(expected.executable)} "$@"`);
    const { info } = await probeInterpreter(shim, { env: process.env });
    expect(info!.executable).toBe(expected.executable);
    expect(info!.executable).not.toBe(shim);
  });

  it("keeps a virtual environment's own bin/python as the executable", async () => {
    const project = path.join(root, "project");
    mkdirSync(path.join(project, ".chrys", "workflows"), { recursive: true });
    execFileSync(python3, ["-m", "venv", "--without-pip", path.join(project, ".venv")]);
    const source =
      '# /// script\n# requires-python = ">=3.9"\n# [tool.chrys]\n# python = "../../.venv"\n# ///\n';
    const file = path.join(project, ".chrys", "workflows", "review.py");
    const { metadata, sites } = parseScriptMetadata(source, file);
    const { interpreter } = resolvePythonSetting({
      python: metadata!.python,
      baseDir: path.dirname(file),
      env: process.env,
      sites,
    });
    expect(interpreter!.command).toBe(path.join(project, ".venv", "bin", "python"));

    const { info } = await probeInterpreter(interpreter!.command, { env: process.env });
    expect(info!.executable).toBe(interpreter!.command);
    expect(info!.resolved_path).not.toBe(interpreter!.command);
    expect(checkEnvironment(metadata, info!, { sites, origin: interpreter!.origin })).toEqual([]);

    // The same interpreter against a requires-python it cannot meet: refused at the requires-python line.
    const strict = parseScriptMetadata(source.replace(">=3.9", "<3.9"), file);
    const [refused] = checkEnvironment(strict.metadata, info!, {
      sites: strict.sites,
      origin: "tool.chrys.python",
    });
    expect(refused).toMatchObject({
      code: "environment_invalid",
      stage: "environment",
      file,
      line: 2,
      column: 21,
    });
    expect(refused!.message).toContain(`Python ${expected.version_info.join(".")}`);
    expect(refused!.message).toContain('fails "<3.9"');
  });

  it("is not fooled by modules in the folder it starts in", async () => {
    const workspace = path.join(root, "workspace");
    mkdirSync(workspace);
    for (const name of ["json.py", "platform.py", "os.py"]) {
      writeFileSync(path.join(workspace, name), "raise SystemExit('shadowed ' + __name__)\n");
    }
    const { info, diagnostics } = await probeInterpreter(python3, { env: process.env, cwd: workspace });
    expect(diagnostics).toEqual([]);
    expect(info!.version_info).toEqual(expected.version_info);
  });

  it("reports an interpreter that exits with an error, with its stderr", async () => {
    const broken = script("broken-python", 'echo "Fatal Python error: init_fs_encoding" >&2\nexit 3');
    const { info, diagnostics } = await probeInterpreter(broken, { env: process.env, file: "/w/review.py" });
    expect(info).toBeNull();
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      code: "environment_invalid",
      stage: "environment",
      file: "/w/review.py",
    });
    expect(diagnostics[0]!.message).toBe(
      `the Python interpreter ${broken} failed to start (exit code 3): Fatal Python error: init_fs_encoding`,
    );
    expect(diagnostics[0]!.traceback).toBe("Fatal Python error: init_fs_encoding");
  });

  it("reports a program that is not Python", async () => {
    const other = script("not-python", "echo hello");
    const { diagnostics } = await probeInterpreter(other, { env: process.env });
    expect(diagnostics[0]!.message).toContain("started but did not report its version");
  });

  it("reports a program that cannot be started", async () => {
    const { diagnostics } = await probeInterpreter(path.join(root, "missing-python"), { env: process.env });
    expect(diagnostics[0]!.message).toContain("could not be started: ENOENT");
  });

  it("gives up on an interpreter that does not answer", async () => {
    const hanging = script("hanging-python", "exec sleep 30");
    const { diagnostics } = await probeInterpreter(hanging, { env: process.env, timeoutMs: 300 });
    expect(diagnostics[0]!.message).toContain("did not answer within");
  });
});
