/**
 * Trust confirmation through `icode workflow run`: custom workflows need `--trust` once, and again whenever
 * their source (the file, or every counted file of a folder), their built definition or their environment
 * (the interpreter) changes; dot-files and `__pycache__` copies do not count; built-in workflows need none;
 * `icode workflow list` shows a custom workflow's title only once it is trusted.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import {
  icode,
  type Project,
  parseErrorJson,
  project,
  runIds,
  runJson,
  SLOW,
  sessionIds,
} from "./run-helpers";

function workflow(title: string, extra = ""): string {
  return `from chrys.workflows import WorkflowBuilder, WorkflowValue
${extra}
wf = WorkflowBuilder(${JSON.stringify(title)})


def greet(value: WorkflowValue) -> str:
    return "hi " + value.text


node = wf.python("greet", greet)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;
}

/** Runs `id` and expects a refusal that asks for `--trust`, with nothing run or recorded. */
async function expectRefused(
  p: Project,
  id: string,
  env: Record<string, string> = {},
  modes: string[][] = [[]],
) {
  const sessionsBefore = sessionIds(p.home);
  for (const mode of modes) {
    const r = await icode(p, ["workflow", "run", id, "--input", "x", ...mode], env);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(1);
    if (mode.includes("--json")) {
      expect(parseErrorJson(r, "trust_required").hint).toContain("--trust");
    } else {
      expect(r.stdout).toBe("");
    }
    expect(r.stderr).toContain("--trust");
    expect(r.stderr).not.toContain("hi x");
  }
  expect(sessionIds(p.home)).toEqual(sessionsBefore);
  return true;
}

async function expectRuns(p: Project, id: string, args: string[] = [], env: Record<string, string> = {}) {
  const r = await runJson(p, id, ["--input", "x", ...args], env);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.json.outputs.map((o) => o.text)).toEqual(["hi x"]);
  return r;
}

function trustFiles(p: Project): string[] {
  const dir = join(p.home, "trust");
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
}

describe.concurrent("icode workflow run: trust confirmation", SLOW, () => {
  it("a project workflow runs only with --trust; the confirmation is saved for later runs", async () => {
    const p = project({ ".chrys/workflows/t.py": workflow("Trusted title") });
    await expectRefused(p, "t", {}, [[], ["--json"]]);
    expect(trustFiles(p)).toEqual([]);

    await expectRuns(p, "t", ["--trust"]);
    const entry = join(p.dir, ".chrys", "workflows", "t.py");
    expect(trustFiles(p)).toEqual([`${createHash("sha256").update(entry).digest("hex")}.json`]);
    await expectRuns(p, "t"); // no --trust needed any more
    const [sid] = sessionIds(p.home);
    expect(sessionIds(p.home)).toHaveLength(2);
    expect(runIds(p.home, sid!)).toHaveLength(1);
  });

  it("an untrusted workflow's code does not run at all, not even its top level", async () => {
    const marker = "top-level.marker";
    const p = project({
      ".chrys/workflows/side.py": workflow("Side effects", `open(${JSON.stringify(marker)}, "a").close()\n`),
    });
    await expectRefused(p, "side");
    expect(existsSync(join(p.dir, marker))).toBe(false);
    await expectRuns(p, "side", ["--trust"]);
    expect(existsSync(join(p.dir, marker))).toBe(true);
    // Changed since it was trusted: refused again, still without running the new code.
    rmSync(join(p.dir, marker));
    writeTree(p.dir, {
      ".chrys/workflows/side.py": workflow(
        "Side effects",
        `open(${JSON.stringify(marker)}, "a").close()\n# edited\n`,
      ),
    });
    await expectRefused(p, "side");
    expect(existsSync(join(p.dir, marker))).toBe(false);
  });

  it("editing a single-file workflow needs --trust again", async () => {
    const p = project({ ".chrys/workflows/t.py": workflow("T") });
    await expectRuns(p, "t", ["--trust"]);
    writeTree(p.dir, { ".chrys/workflows/t.py": `${workflow("T")}# a comment changes the source\n` });
    await expectRefused(p, "t");
    await expectRuns(p, "t", ["--trust"]);
    await expectRuns(p, "t");
  });

  it("a changed definition needs --trust again, even when the file itself is unchanged", async () => {
    // A single file's source is that file only; a module it imports can still change what it builds.
    const p = project({
      ".chrys/workflows/t.py": workflow("T")
        .replace('wf.python("greet"', "wf.python(_names.NODE")
        .replace("from chrys.workflows", "import _names\nfrom chrys.workflows"),
      ".chrys/workflows/_names.py": 'NODE = "a"\n',
    });
    await expectRuns(p, "t", ["--trust"]);
    writeTree(p.dir, { ".chrys/workflows/_names.py": 'NODE = "bb"\n' });
    await expectRefused(p, "t");
    const r = await expectRuns(p, "t", ["--trust"]);
    expect(r.json.outputs[0]?.node_id).toBe("bb");
  });

  it("a workflow folder: editing, adding or deleting any file needs --trust again; dot-files and __pycache__ do not", async () => {
    const p = project({
      ".chrys/workflows/pkg/pkg.py": workflow("Pkg", "from helper import VALUE\n"),
      ".chrys/workflows/pkg/helper.py": "VALUE = 1\n",
      ".chrys/workflows/pkg/data/notes.txt": "data\n",
    });
    const dir = join(p.dir, ".chrys", "workflows", "pkg");
    await expectRefused(p, "pkg");
    await expectRuns(p, "pkg", ["--trust"]);
    await expectRuns(p, "pkg");

    writeFileSync(join(dir, "helper.py"), "VALUE = 2\n"); // edit a helper module
    await expectRefused(p, "pkg");
    await expectRuns(p, "pkg", ["--trust"]);

    writeFileSync(join(dir, "data", "notes.txt"), "changed data\n"); // edit a data file
    await expectRefused(p, "pkg");
    await expectRuns(p, "pkg", ["--trust"]);

    writeFileSync(join(dir, "data", "extra.bin"), Buffer.from([0, 1, 2])); // add a file
    await expectRefused(p, "pkg");
    await expectRuns(p, "pkg", ["--trust"]);

    rmSync(join(dir, "data", "extra.bin")); // delete a file
    await expectRefused(p, "pkg");
    await expectRuns(p, "pkg", ["--trust"]);

    // Not part of the source: names starting with "." and Python's compiled copies.
    writeTree(dir, {
      ".notes": "my notes\n",
      ".venv/pyvenv.cfg": "home = /nowhere\n",
      "__pycache__/helper.cpython-311.pyc": Buffer.from("not really bytecode"),
    });
    await expectRuns(p, "pkg");
    writeFileSync(join(dir, ".notes"), "my notes, edited\n");
    writeFileSync(join(dir, "__pycache__", "helper.cpython-311.pyc"), Buffer.from("other bytes"));
    await expectRuns(p, "pkg");
  });

  it("pointing the workflow at another interpreter (ICODE_PYTHON in a venv) needs --trust again", async () => {
    const p = project({ ".chrys/workflows/t.py": workflow("T") });
    await expectRuns(p, "t", ["--trust"]);
    const venv = join(p.dir, "venv");
    execFileSync("python3", ["-m", "venv", "--without-pip", venv]);
    const env = { ICODE_PYTHON: join(venv, "bin", "python") };
    await expectRefused(p, "t", env);
    const refused = await icode(p, ["workflow", "run", "t"], env);
    expect(refused.stderr).toMatch(/environment|interpreter/i);
    await expectRuns(p, "t", ["--trust"], env);
    await expectRuns(p, "t", [], env);
    // Back to the default interpreter: that is a change too.
    await expectRefused(p, "t");
  });

  it("built-in workflows need no trust", async () => {
    const p = project();
    const r = await runJson(p, "echo", ["--input", "x"]);
    expect(r.exitCode).toBe(0);
    expect(trustFiles(p)).toEqual([]);
  });

  it("icode workflow list shows '-' as the title before trust and the title after", async () => {
    const p = project({ ".chrys/workflows/t.py": workflow("My Title") });
    const row = async () => {
      const r = await icode(p, ["workflow", "list"]);
      expect(r.exitCode).toBe(0);
      const line = r.stdout.split("\n").find((l) => l.startsWith("t "));
      expect(line, r.stdout).toBeDefined();
      return line!.split(/ {2,}/);
    };
    expect(await row()).toEqual(["t", "project", "-", join(p.dir, ".chrys", "workflows", "t.py")]);
    await expectRefused(p, "t");
    expect((await row())[2]).toBe("-");
    await expectRuns(p, "t", ["--trust"]);
    expect(await row()).toEqual(["t", "project", "My Title", join(p.dir, ".chrys", "workflows", "t.py")]);
    const json = await icode(p, ["workflow", "list", "--json"]);
    expect(
      (JSON.parse(json.stdout) as { workflows: { id: string; title: string }[] }).workflows,
    ).toContainEqual(expect.objectContaining({ id: "t", title: "My Title" }));
  });

  it.each([
    ["a link", "link"],
    ["a world-writable file", "writable"],
  ])("%s is refused with one reason, one code and one hint (workflow_unreadable)", async (_, kind) => {
    const p = project({ "real.py": workflow("Real") });
    const file = join(p.dir, ".chrys", "workflows", "w.py");
    mkdirSync(dirname(file), { recursive: true });
    if (kind === "link") symlinkSync(join(p.dir, "real.py"), file);
    else {
      writeFileSync(file, workflow("Writable"));
      chmodSync(file, 0o666);
    }
    const r = await icode(p, ["workflow", "run", "w", "--trust"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: workflow 'w' cannot be read: .* \[workflow_unreadable\]$/);
    expect(lines[1]).toMatch(/^ {2}help: /);
    expect(r.stderr).not.toContain("workflow_not_found");
    expect(r.stderr).not.toContain("list workflows with");
    const json = await icode(p, ["workflow", "run", "w", "--trust", "--json"]);
    const error = parseErrorJson(json, "workflow_unreadable");
    expect(error.hint).toBe(lines[1]!.slice("  help: ".length));
    expect(sessionIds(p.home)).toEqual([]);
  });
});
