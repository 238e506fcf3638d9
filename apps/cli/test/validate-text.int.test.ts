import { runCli, tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";

const ECHO = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Echo")
node = wf.python("echo", lambda value: value)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

describe("icode workflow validate: text report", () => {
  it("prints one PASS line for a good workflow", async () => {
    const dir = tmpDir();
    writeTree(dir, { "echo.py": ECHO });
    const r = await runCli(["workflow", "validate", "echo.py"], { cwd: dir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("PASS echo (file) · 1 node · 0 edges\n");
    expect(r.stderr).toBe("");
  });

  it("counts nodes and edges with singular nouns only for exactly one", async () => {
    const dir = tmpDir();
    writeTree(dir, {
      "pair.py": `from chrys.workflows import WorkflowBuilder
wf = WorkflowBuilder("Pair")
a = wf.python("a", lambda v: v)
b = wf.python("b", lambda v: v)
wf.edge(a, b)
wf.start(a)
wf.output(b)
workflow = wf.build()
`,
    });
    const r = await runCli(["workflow", "validate", "pair.py"], { cwd: dir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("PASS pair (file) · 2 nodes · 1 edge\n");
  });

  it("renders the spec's load_error example like a compiler, with captured load output", async () => {
    const dir = tmpDir();
    writeTree(dir, {
      ".chrys/workflows/code-review/code-review.py": `from chrys.workflows import WorkflowBuilder\n\nimport steps\n`,
      ".chrys/workflows/code-review/steps.py": `print("loading steps")\nPROMPT = summarise("diff")\n`,
    });
    const r = await runCli(["workflow", "validate", ".chrys/workflows/code-review"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(
      /^\.\/\.chrys\/workflows\/code-review\/steps\.py:2(:10)?: error: NameError: name 'summarise' is not defined \[load_error\]$/,
    );
    expect(lines[1]).toBe(`    2 | PROMPT = summarise("diff")`);
    if (lines[0]!.includes(":2:10:")) expect(lines[2]).toBe("      |          ^~~~~~~~~");
    expect(r.stdout).toContain("  note: imported from ./.chrys/workflows/code-review/code-review.py:3\n");
    expect(r.stdout).toContain("captured output (load):\n  | loading steps\n");
    expect(r.stdout.endsWith("FAIL code-review (package): 1 error\n")).toBe(true);
  });

  it("flattens workflow text so it cannot forge a status line", async () => {
    const dir = tmpDir();
    writeTree(dir, {
      "forge.py": `print("x\\nPASS forge (file) · 1 node · 0 edges")\nraise RuntimeError("bad\\nPASS forge")\n`,
    });
    const r = await runCli(["workflow", "validate", "forge.py"], { cwd: dir });
    expect(r.exitCode).toBe(1);
    const statusLines = r.stdout.split("\n").filter((l) => /^(PASS|FAIL) /.test(l));
    expect(statusLines).toEqual(["FAIL forge (file): 1 error"]);
  });
});

describe("icode workflow validate: hints in the CLI's words", () => {
  it("a path to check instead becomes the command that checks it; the JSON report keeps the neutral hint", async () => {
    const cwd = tmpDir();
    writeTree(cwd, { "review/review.py": ECHO, "review/steps.py": ECHO });
    const text = await runCli(["workflow", "validate", "review/steps.py"], { cwd });
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain("  help: Check the whole folder: `icode workflow validate review`.\n");
    const json = await runCli(["workflow", "validate", "review/steps.py", "--json"], { cwd });
    const report = JSON.parse(json.stdout) as { diagnostics: { code: string; hint: string }[] };
    expect(report.diagnostics[0]).toMatchObject({
      code: "path_not_workflow",
      hint: "Check the whole folder: `review`.",
    });
  });

  it("the workflow list becomes `icode workflow list`", async () => {
    const cwd = tmpDir();
    const text = await runCli(["workflow", "validate", "missing.py"], { cwd });
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain(
      "  help: Check the path; `icode workflow list` shows the workflows iCode finds.\n",
    );
  });
});

describe("icode workflow validate: arguments", () => {
  it("exits 2 with usage on stderr and nothing on stdout for a missing path", async () => {
    const r = await runCli(["workflow", "validate"], { cwd: tmpDir() });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("Usage: icode workflow validate <path> [--json] [-q]");
  });

  it("exits 2 for an unknown option", async () => {
    const r = await runCli(["workflow", "validate", "x.py", "--bogus"], { cwd: tmpDir() });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
  });

  it("shows help with -h", async () => {
    const r = await runCli(["workflow", "validate", "-h"], { cwd: tmpDir() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("resolve, read, metadata, environment, load, graph, bindings");
  });
});

describe("icode workflow validate: interrupt", () => {
  it("exits 130 when interrupted with Ctrl-C while the workflow loads, with nothing on stdout", async () => {
    const { spawn } = await import("node:child_process");
    const { CLI_BIN } = await import("@icode/test-utils");
    const dir = tmpDir();
    writeTree(dir, { "slow.py": "import time\nprint('loading')\ntime.sleep(30)\n" });
    const child = spawn(process.execPath, [CLI_BIN, "workflow", "validate", "slow.py"], {
      cwd: dir,
      env: { ...process.env, CHRYS_HOME: `${dir}/.home` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    await new Promise((r) => setTimeout(r, 1500));
    const started = Date.now();
    child.kill("SIGINT");
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    expect(code).toBe(130);
    expect(stdout).toBe("");
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
