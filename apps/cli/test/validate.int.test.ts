import { execFileSync } from "node:child_process";
import { chmodSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, type Tree, tmpDir, writeTree } from "@icode/test-utils";
import type { ValidateReport } from "@icode/workflow-engine";
import { describe, expect, it } from "vitest";

const PY_VERSION = execFileSync("python3", [
  "-c",
  "import sys; print(sys.version_info[0], sys.version_info[1])",
])
  .toString()
  .trim()
  .split(" ")
  .map(Number) as [number, number];
/** Columns appear only when the workflow's Python is 3.11 or later. */
const HAS_COLUMNS = PY_VERSION[0] > 3 || (PY_VERSION[0] === 3 && PY_VERSION[1] >= 11);

const ECHO = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Echo")


def echo(value: WorkflowValue) -> WorkflowValue:
    return value


node = wf.python("echo", echo)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

async function validate(
  cwd: string,
  path: string,
  env: Record<string, string> = {},
  ids?: { uid: number; gid: number },
) {
  const result = await runCli(["workflow", "validate", path, "--json"], { cwd, env, ...ids });
  let report: ValidateReport;
  try {
    report = JSON.parse(result.stdout) as ValidateReport;
  } catch {
    throw new Error(
      `no JSON report (exit ${result.exitCode}):\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return { ...result, report };
}

interface Expectation {
  code: string;
  stage: string;
  severity?: "error" | "warning";
  /** Relative to the test folder; `null` when the diagnostic has no file. */
  file?: string | null;
  line?: number | null;
  /** The column on Python 3.11+ (always `null` before). */
  column?: number | null;
  node?: string | null;
}

interface Case {
  name: string;
  tree?: Tree;
  setup?: (dir: string) => void;
  path: string | ((dir: string) => string);
  env?: (dir: string) => Record<string, string>;
  expect: Expectation;
}

const CASES: Case[] = [
  { name: "path_not_found", path: "missing.py", expect: { code: "path_not_found", stage: "resolve" } },
  {
    name: "path_is_link",
    tree: { "echo.py": ECHO },
    setup: (dir) => symlinkSync(join(dir, "echo.py"), join(dir, "link.py")),
    path: "link.py",
    expect: { code: "path_is_link", stage: "resolve" },
  },
  {
    name: "path_not_workflow (not a .py file)",
    tree: { "notes.txt": "hello\n" },
    path: "notes.txt",
    expect: { code: "path_not_workflow", stage: "resolve" },
  },
  {
    name: "path_not_workflow (a folder that holds workflows)",
    tree: { ".chrys/workflows/echo.py": ECHO },
    path: ".chrys/workflows",
    expect: { code: "path_not_workflow", stage: "resolve" },
  },
  {
    name: "name_ignored",
    tree: { "_private.py": ECHO },
    path: "_private.py",
    expect: { code: "name_ignored", stage: "resolve" },
  },
  {
    name: "name_reserved",
    tree: { ".home/workflows/sdk/sdk.py": ECHO },
    path: ".home/workflows/sdk",
    expect: { code: "name_reserved", stage: "resolve" },
  },
  {
    name: "entry_missing",
    tree: { "review/other.py": ECHO },
    path: "review",
    expect: { code: "entry_missing", stage: "resolve" },
  },
  {
    name: "source_too_large",
    tree: { "big.py": `${ECHO}# ${"x".repeat(4 * 1024 * 1024)}\n` },
    path: "big.py",
    expect: { code: "source_too_large", stage: "read", file: "big.py" },
  },
  {
    name: "package_too_large (more than 1000 files)",
    setup: (dir) => {
      writeTree(dir, { "many/many.py": ECHO });
      for (let i = 0; i < 1000; i++) writeFileSync(join(dir, "many", `data-${i}.txt`), "x");
    },
    path: "many",
    expect: { code: "package_too_large", stage: "read" },
  },
  {
    name: "package_link",
    tree: { "linked/linked.py": ECHO, "elsewhere.txt": "x" },
    setup: (dir) => symlinkSync(join(dir, "elsewhere.txt"), join(dir, "linked", "data.txt")),
    path: "linked",
    expect: { code: "package_link", stage: "read", file: "linked/data.txt" },
  },
  {
    name: "package_unsupported_file",
    tree: { "piped/piped.py": ECHO },
    setup: (dir) => execFileSync("mkfifo", [join(dir, "piped", "queue")]),
    path: "piped",
    expect: { code: "package_unsupported_file", stage: "read", file: "piped/queue" },
  },
  {
    name: "source_not_utf8",
    setup: (dir) =>
      writeFileSync(
        join(dir, "latin.py"),
        Buffer.concat([Buffer.from("# one\n# two\nname = '"), Buffer.from([0xe9]), Buffer.from("'\n")]),
      ),
    path: "latin.py",
    expect: { code: "source_not_utf8", stage: "read", file: "latin.py", line: 3 },
  },
  {
    name: "metadata_invalid",
    tree: { "meta.py": `# /// script\n# requires-python = 3\n# ///\n${ECHO}` },
    path: "meta.py",
    expect: { code: "metadata_invalid", stage: "metadata", file: "meta.py", line: 2 },
  },
  {
    name: "environment_invalid (no such interpreter)",
    tree: { "env.py": `# /// script\n# [tool.chrys]\n# python = "./no-such-venv"\n# ///\n${ECHO}` },
    path: "env.py",
    expect: { code: "environment_invalid", stage: "environment", file: "env.py", line: 3 },
  },
  {
    name: "environment_invalid (requires-python not met)",
    tree: { "old.py": `# /// script\n# requires-python = ">=4"\n# ///\n${ECHO}` },
    path: "old.py",
    expect: { code: "environment_invalid", stage: "environment", file: "old.py", line: 2 },
  },
  {
    name: "syntax_error",
    tree: {
      "syntax.py": "from chrys.workflows import WorkflowBuilder\n\nwf = WorkflowBuilder('S')\nx = (1 +\n",
    },
    path: "syntax.py",
    expect: { code: "syntax_error", stage: "load", file: "syntax.py", line: 4 },
  },
  {
    name: "syntax_error in a helper module of a folder that the entry does not import",
    tree: { "pkg/pkg.py": ECHO, "pkg/unused.py": "def broken(:\n    pass\n" },
    path: "pkg",
    expect: { code: "syntax_error", stage: "load", file: "pkg/unused.py", line: 1 },
  },
  {
    name: "load_error (the spec's example)",
    tree: {
      "code-review/code-review.py": `from chrys.workflows import WorkflowBuilder\nprint("loading entry")\nimport steps\n${ECHO}`,
      "code-review/steps.py": `print("loading steps")\nPROMPT = summarise("diff")\n`,
    },
    path: "code-review",
    expect: { code: "load_error", stage: "load", file: "code-review/steps.py", line: 2, column: 10 },
  },
  {
    name: "sdk_validation_error",
    tree: {
      "names.py":
        "from chrys.workflows import WorkflowBuilder\n\nwf = WorkflowBuilder('N')\nnode = wf.python('a->b', lambda v: v)\n",
    },
    path: "names.py",
    expect: { code: "sdk_validation_error", stage: "load", file: "names.py", line: 4, column: 8 },
  },
  {
    name: "sdk_validation_error from build() points at the node",
    tree: {
      "unreach.py": `from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("U")
a = wf.python("a", lambda v: v)
b = wf.python("b", lambda v: v)
wf.start(a)
wf.output(a)
workflow = wf.build()
`,
    },
    path: "unreach.py",
    expect: { code: "sdk_validation_error", stage: "load", file: "unreach.py", line: 5, node: "b" },
  },
  {
    name: "missing_workflow",
    tree: { "nowf.py": "from chrys.workflows import WorkflowBuilder\n\nwf = WorkflowBuilder('M')\n" },
    path: "nowf.py",
    expect: { code: "missing_workflow", stage: "load", file: "nowf.py" },
  },
  {
    name: "load_timeout",
    tree: { "slow.py": "import time\ntime.sleep(60)\n" },
    path: "slow.py",
    env: () => ({ ICODE_LOAD_TIMEOUT_SECONDS: "1" }),
    expect: { code: "load_timeout", stage: "load", file: "slow.py" },
  },
  {
    name: "worker_failed",
    tree: { "exits.py": "import os\nos._exit(3)\n" },
    path: "exits.py",
    expect: { code: "worker_failed", stage: "load", file: "exits.py" },
  },
  {
    name: "manifest_invalid (a definition the builder would never emit)",
    tree: {
      "forged.py": `${ECHO}
manifest = workflow.definition.to_manifest()
manifest["edges"].append({"source": "echo", "target": "echo", "scope": None, "condition": None, "site": None})
type(workflow.definition).to_manifest = lambda self: manifest
type(workflow)._shared_manifest = lambda self: manifest  # what the worker sends since the SDK stopped copying
`,
    },
    path: "forged.py",
    expect: { code: "manifest_invalid", stage: "graph", node: "echo->echo" },
  },
  {
    name: "loop_exit_all_conditional (warning)",
    tree: {
      "loopy.py": `from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("L")


def body(scope):
    a = scope.python("a", lambda v: v)
    b = scope.python("b", lambda v: v)
    scope.edge(a, b, when=lambda v: bool(v.text))
    return a, b


loop = wf.loop("loop", body, until=lambda v: True, max_iterations=3)
wf.start(loop)
wf.output(loop)
workflow = wf.build()
`,
    },
    path: "loopy.py",
    expect: {
      code: "loop_exit_all_conditional",
      stage: "graph",
      severity: "warning",
      file: "loopy.py",
      line: 8,
    },
  },
  {
    name: "agent_profile_missing",
    tree: {
      "agent.py": `from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("A")
writer = wf.agent("writer", profile="writer-profile")
wf.start(writer)
wf.output(writer)
workflow = wf.build()
`,
    },
    path: "agent.py",
    expect: { code: "agent_profile_missing", stage: "bindings", file: "agent.py", line: 4, node: "writer" },
  },
];

describe("icode workflow validate: every diagnostic code through the CLI", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const dir = tmpDir();
    if (c.tree) writeTree(dir, c.tree);
    c.setup?.(dir);
    const path = typeof c.path === "string" ? c.path : c.path(dir);
    const { report, exitCode, stderr } = await validate(dir, path, c.env?.(dir) ?? {});
    const severity = c.expect.severity ?? "error";
    expect(stderr).toBe("");
    expect(exitCode).toBe(severity === "error" ? 1 : 0);
    expect(report.status).toBe(severity === "error" ? "fail" : "pass");
    const found = report.diagnostics.find((d) => d.code === c.expect.code);
    expect(found, JSON.stringify(report.diagnostics, null, 2)).toBeDefined();
    const d = found!;
    expect(d.stage).toBe(c.expect.stage);
    expect(d.severity).toBe(severity);
    if (c.expect.file !== undefined) {
      expect(d.file).toBe(c.expect.file === null ? null : join(dir, c.expect.file));
    }
    if (c.expect.line !== undefined) expect(d.line).toBe(c.expect.line);
    if (c.expect.line != null) expect(d.source_line).not.toBeNull();
    if (c.expect.column !== undefined) expect(d.column).toBe(HAS_COLUMNS ? c.expect.column : null);
    else if (!HAS_COLUMNS) expect(d.column).toBeNull();
    if (c.expect.node !== undefined) expect(d.node).toBe(c.expect.node);
    // The stage that found the problem is the first that did not pass; later ones are skipped on failure.
    const stage = report.stages.find((s) => s.name === c.expect.stage)!;
    expect(stage.status).toBe(severity === "error" ? "fail" : "pass");
  });
});

describe("icode workflow validate: shadowing and unreadable files", () => {
  it("warns `shadowed` when a higher-priority workflow has the same ID, and still passes", async () => {
    const dir = tmpDir();
    writeTree(dir, { ".chrys/workflows/echo/echo.py": ECHO, ".chrys/workflows/echo.py": ECHO });
    const { report, exitCode, stdout } = await validate(dir, ".chrys/workflows/echo.py");
    expect(exitCode).toBe(0);
    const d = report.diagnostics.find((x) => x.code === "shadowed");
    expect(d).toMatchObject({ severity: "warning", stage: "resolve" });
    expect(d?.message).toContain(join(dir, ".chrys/workflows/echo"));
    expect(report.status).toBe("pass");
    expect(JSON.parse(stdout).stages[0]).toEqual({ name: "resolve", status: "pass" });
  });

  it("reports diagnostics_truncated when a folder has more syntax errors than the report keeps", async () => {
    const dir = tmpDir();
    writeTree(dir, { "broken/broken.py": ECHO });
    for (let i = 0; i < 60; i++) writeFileSync(join(dir, "broken", `m${i}.py`), "def f(:\n");
    const { report, exitCode } = await validate(dir, "broken");
    expect(exitCode).toBe(1);
    expect(report.diagnostics_truncated).toBe(true);
    expect(report.diagnostics.length).toBe(50);
    expect(report.diagnostics.every((d) => d.code === "syntax_error")).toBe(true);
  });

  /** Root reads anything, so as root the check runs the CLI as `nobody` over files that user owns. */
  function asUnprivileged(dir: string): { uid: number; gid: number } | undefined {
    if (process.getuid?.() !== 0) return undefined;
    execFileSync("chown", ["-R", "65534:65534", dir]);
    return { uid: 65534, gid: 65534 };
  }

  it("source_unreadable: the entry file cannot be read", async () => {
    const dir = tmpDir();
    writeTree(dir, { "secret.py": ECHO });
    const ids = asUnprivileged(dir);
    chmodSync(join(dir, "secret.py"), 0o000);
    const { report, exitCode } = await validate(dir, "secret.py", {}, ids);
    expect(exitCode).toBe(1);
    expect(report.diagnostics[0]).toMatchObject({
      code: "source_unreadable",
      stage: "read",
      file: join(dir, "secret.py"),
    });
  });

  it("package_unreadable: a file inside the folder cannot be read", async () => {
    const dir = tmpDir();
    writeTree(dir, { "pkg/pkg.py": ECHO, "pkg/data/notes.txt": "x" });
    const ids = asUnprivileged(dir);
    chmodSync(join(dir, "pkg/data/notes.txt"), 0o000);
    const { report, exitCode } = await validate(dir, "pkg", {}, ids);
    expect(exitCode).toBe(1);
    expect(report.diagnostics[0]).toMatchObject({
      code: "package_unreadable",
      stage: "read",
      file: join(dir, "pkg/data/notes.txt"),
    });
  });
});
