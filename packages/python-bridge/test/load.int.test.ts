import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DefinitionSchema } from "@icode/workflow-graph";
import { describe, expect, test } from "vitest";
import type { LoadResult } from "../src/index";
import { hasColumns, node, olderPython, pycacheFolders, start, workflowSource, workspace } from "./helpers";

const ECHO = workflowSource(`
def echo(value):
    return value
n = wf.python("echo", echo)
wf.start(n)
wf.output(n)
`);

function failure(result: LoadResult) {
  if (result.ok) throw new Error("expected the load to fail");
  expect(result.diagnostics).toHaveLength(1);
  return result.diagnostics[0]!;
}

describe("loading a single file", () => {
  test("returns the built definition and the top-level output", async () => {
    const ws = workspace({ "echo.py": `print("hello from the top")\n${ECHO}` });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("echo.py"), packageDir: null });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const definition = DefinitionSchema.parse(result.definition);
    expect(definition).toMatchObject({ title: "Test", start: "echo", outputs: ["echo"] });
    expect(definition.nodes[0]).toMatchObject({
      id: "echo",
      kind: "python",
      is_async: false,
      takes_context: false,
    });
    expect(result.output).toEqual({ text: "hello from the top\n", truncated: false });
    expect(worker.hello.python.version_info[0]).toBe(3);
    expect(pycacheFolders(ws.dir)).toEqual([]);
  });

  test("puts the file's directory first on sys.path, and the SDK after it", async () => {
    const ws = workspace({
      "flows/sibling.py": "VALUE = 'from the sibling'\n",
      "flows/paths.py": workflowSource(
        `
import sys, os, sibling, chrys.workflows
print(sys.path[0])
print(os.path.dirname(os.path.dirname(os.path.dirname(chrys.workflows.__file__))) == sys.path[1])
print(sibling.VALUE, os.getcwd())
def echo(value):
    return value
n = wf.python("echo", echo)
wf.start(n)
wf.output(n)
`,
      ),
    });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("flows/paths.py"), packageDir: null });
    expect(result.output.text).toBe(`${ws.path("flows")}\nTrue\nfrom the sibling ${ws.dir}\n`);
  });
});

describe("loading a workflow folder", () => {
  test("imports helper modules from subfolders with and without __init__.py, and reads files next to __file__", async () => {
    const ws = workspace(
      {
        "review/review.py": workflowSource(
          `
from pathlib import Path
import steps
from helpers.git import diff
from lib.text import shout
PROMPT = (Path(__file__).parent / "prompts" / "summary.md").read_text()
def run(value):
    return shout(steps.check(diff(value.text))) + " " + PROMPT.strip()
n = wf.python("run", run)
wf.start(n)
wf.output(n)
`,
        ),
        "review/steps.py": "def check(text):\n    return text + ' checked'\n",
        "review/helpers/git.py": "def diff(text):\n    return 'diff of ' + text\n",
        "review/lib/__init__.py": "",
        "review/lib/text.py": "def shout(text):\n    return text.upper()\n",
        "review/prompts/summary.md": "Summarise.\n",
      },
      { ownCache: true },
    );
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("review/review.py"), packageDir: ws.path("review") });
    expect(result.ok).toBe(true);
    const outcome = await worker.invoke(node("run", "x"));
    expect(outcome).toMatchObject({ ok: true, value: { text: "DIFF OF X CHECKED Summarise." } });
    // Lazily imported modules and child Python processes also keep their bytecode out of the folder.
    expect(pycacheFolders(ws.dir)).toEqual([]);
    expect(existsSync(ws.cache)).toBe(true);
  });

  test("no __pycache__ appears beside user files, also for Python processes the workflow starts", async () => {
    const ws = workspace({
      "flow/flow.py": workflowSource(
        `
import subprocess, sys
def run(value):
    import late
    done = subprocess.run([sys.executable, "-c", "import late; print(late.X)"], cwd=${JSON.stringify("flow")}, capture_output=True, text=True)
    return late.X + done.stdout.strip()
n = wf.python("run", run)
wf.start(n)
wf.output(n)
`,
      ),
      "flow/late.py": "X = 'late'\n",
    });
    const worker = await start(ws);
    expect((await worker.load({ entry: ws.path("flow/flow.py"), packageDir: ws.path("flow") })).ok).toBe(
      true,
    );
    expect(await worker.invoke(node("run"))).toMatchObject({ ok: true, value: { text: "latelate" } });
    expect(pycacheFolders(ws.dir)).toEqual([]);
  });

  test("does not use stale compiled copies found in __pycache__ beside the files", async () => {
    const ws = workspace({
      "flow/flow.py": ECHO.replace("return value", "return helper.TEXT"),
      "flow/helper.py": "TEXT = 'old'\n",
    });
    ws.write("flow/flow.py", `import helper\n${ECHO.replace("return value", "return helper.TEXT")}`);
    // Compile an old version into flow/__pycache__ the normal way, then change the source.
    const { execFileSync } = await import("node:child_process");
    const { python } = await import("./helpers");
    execFileSync(python(), ["-c", "import py_compile; py_compile.compile('flow/helper.py')"], {
      cwd: ws.dir,
    });
    expect(readdirSync(ws.path("flow/__pycache__")).length).toBe(1);
    ws.write("flow/helper.py", "TEXT = 'new'\n");
    const worker = await start(ws);
    expect((await worker.load({ entry: ws.path("flow/flow.py"), packageDir: ws.path("flow") })).ok).toBe(
      true,
    );
    expect(await worker.invoke(node("echo"))).toMatchObject({ ok: true, value: { text: "new" } });
  });

  test("a relative import fails with load_error and a hint", async () => {
    const ws = workspace({
      "pkg/pkg.py": `from .steps import check\n${ECHO}`,
      "pkg/steps.py": "def check():\n    pass\n",
    });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("pkg/pkg.py"), packageDir: ws.path("pkg") }));
    expect(d).toMatchObject({
      code: "load_error",
      stage: "load",
      file: ws.path("pkg/pkg.py"),
      line: 1,
      source_line: "from .steps import check",
    });
    expect(d.message).toMatch(/^ImportError: attempted relative import/);
    expect(d.hint).toContain("from steps import");
  });
});

describe("load diagnostics", () => {
  test("syntax_error in any .py file of a folder, even one never imported, with its position", async () => {
    const ws = workspace({
      "flow/flow.py": ECHO,
      "flow/unused/broken.py": "x = 1\ndef f(:\n    pass\n",
      "flow/.hidden/ignored.py": "this is not python\n",
      "flow/__pycache__/ignored.py": "this is not python\n",
    });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("flow/flow.py"), packageDir: ws.path("flow") });
    const d = failure(result);
    expect(d).toMatchObject({
      severity: "error",
      code: "syntax_error",
      stage: "load",
      file: ws.path("flow/unused/broken.py"),
      line: 2,
      column: hasColumns() ? 7 : null,
      source_line: "def f(:",
    });
    expect(d.message).toMatch(/^SyntaxError: /);
    expect(d.traceback).toContain("broken.py");
    expect(result.output).toEqual({ text: "", truncated: false });
  });

  test("syntax_error in a module imported by a single file notes where it was imported", async () => {
    const ws = workspace({ "flow.py": `import helper\n${ECHO}`, "helper.py": "value = (1,\n" });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("flow.py"), packageDir: null }));
    expect(d).toMatchObject({ code: "syntax_error", file: ws.path("helper.py"), line: 1 });
    expect(d.notes).toEqual([{ message: "imported from", file: ws.path("flow.py"), line: 1 }]);
  });

  test("load_error points at the innermost user frame, notes how it was reached, keeps only user frames", async () => {
    const ws = workspace({
      "cr/cr.py": `import a\n${ECHO}`,
      "cr/a.py": "import b\n",
      "cr/b.py": "import json\nfrom c import parse\n\nCONFIG = parse('{')\n",
      "cr/c.py": "import json\n\ndef parse(text):\n    return json.loads(text)\n",
    });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("cr/cr.py"), packageDir: ws.path("cr") }));
    expect(d).toMatchObject({
      code: "load_error",
      file: ws.path("cr/c.py"),
      line: 4,
      source_line: "    return json.loads(text)",
    });
    expect(d.message).toMatch(/^json\.decoder\.JSONDecodeError: Expecting property name/);
    expect(d.notes).toEqual([
      { message: "called from", file: ws.path("cr/b.py"), line: 4 },
      { message: "imported from", file: ws.path("cr/a.py"), line: 1 },
      { message: "imported from", file: ws.path("cr/cr.py"), line: 1 },
    ]);
    const tb = d.traceback ?? "";
    expect(tb).toContain(`File "${ws.path("cr/c.py")}", line 4, in parse`);
    expect(tb).not.toMatch(/json[/\\]decoder\.py|importlib|chrys[/\\]workflows/);
    expect(tb.trimEnd().split("\n").pop()).toMatch(/^json\.decoder\.JSONDecodeError: /);
  });

  test.runIf(hasColumns())(
    "columns are 1-based characters with an exclusive end on Python 3.11+",
    async () => {
      const ws = workspace({
        "cr/cr.py": `import steps\n${ECHO}`,
        "cr/steps.py": 'print("loading steps")\nPROMPT = "é" + summarise("diff")\n',
      });
      const worker = await start(ws);
      const result = await worker.load({ entry: ws.path("cr/cr.py"), packageDir: ws.path("cr") });
      const d = failure(result);
      expect(d).toMatchObject({
        code: "load_error",
        message: "NameError: name 'summarise' is not defined",
        file: ws.path("cr/steps.py"),
        line: 2,
        column: 16,
        end_line: 2,
        end_column: 25,
        source_line: 'PROMPT = "é" + summarise("diff")',
        notes: [{ message: "imported from", file: ws.path("cr/cr.py"), line: 1 }],
      });
      expect(result.output.text).toBe("loading steps\n");
    },
  );

  test.runIf(olderPython() !== null)("columns are null before Python 3.11", async () => {
    const ws = workspace({
      "cr/cr.py": `import steps\n${ECHO}`,
      "cr/steps.py": 'PROMPT = summarise("diff")\n',
    });
    const worker = await start(ws, { python: olderPython()! });
    const d = failure(await worker.load({ entry: ws.path("cr/cr.py"), packageDir: ws.path("cr") }));
    expect(d).toMatchObject({ code: "load_error", line: 1, column: null, end_line: null, end_column: null });
    expect(d.notes).toEqual([{ message: "imported from", file: ws.path("cr/cr.py"), line: 1 }]);
    const syntax = workspace({ "s.py": "def f(:\n" });
    const other = await start(syntax, { python: olderPython()! });
    expect(failure(await other.load({ entry: syntax.path("s.py"), packageDir: null }))).toMatchObject({
      code: "syntax_error",
      line: 1,
      column: null,
    });
  });

  test("sdk_validation_error carries the builder's node, site and notes", async () => {
    const ws = workspace({
      "bad.py": workflowSource(`
def echo(value, ctx, extra):
    return value
n = wf.python("echo", echo)
`),
    });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("bad.py"), packageDir: null }));
    expect(d).toMatchObject({
      code: "sdk_validation_error",
      stage: "load",
      node: "echo",
      file: ws.path("bad.py"),
      line: 7,
      source_line: 'n = wf.python("echo", echo)',
    });
    expect(d.column).toBe(hasColumns() ? 5 : null);
    expect(d.message).toContain("positional parameter");
    expect(d.traceback).not.toMatch(/chrys[/\\]workflows/);
  });

  test("sdk_validation_error from build() points at the declaration with the SDK's note", async () => {
    const ws = workspace({
      "unreachable.py": workflowSource(`
def echo(value):
    return value
a = wf.python("a", echo)
b = wf.python("b", echo)
wf.start(a)
wf.output(a)
`),
    });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("unreachable.py"), packageDir: null }));
    expect(d).toMatchObject({
      code: "sdk_validation_error",
      node: "b",
      file: ws.path("unreachable.py"),
      line: 8,
    });
    expect(d.notes.length).toBeGreaterThanOrEqual(1);
    expect(d.notes.some((note) => note.line === 12)).toBe(true);
  });

  test.each([
    [
      "no workflow variable",
      "from chrys.workflows import WorkflowBuilder\nwf = WorkflowBuilder('x')\n",
      /no top-level variable named `workflow`/,
    ],
    [
      "a builder, not built",
      "from chrys.workflows import WorkflowBuilder\nworkflow = WorkflowBuilder('x')\n",
      /is a WorkflowBuilder, not a built Workflow/,
    ],
    ["something else", "workflow = 42\n", /is an int, not a Workflow built by/],
    [
      "assigned only under __main__",
      `${ECHO.replace("workflow = wf.build()", 'if __name__ == "__main__":\n    workflow = wf.build()')}`,
      /no top-level variable/,
    ],
  ])("missing_workflow: %s", async (_name, source, message) => {
    const ws = workspace({ "flow.py": source });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("flow.py"), packageDir: null }));
    expect(d).toMatchObject({ code: "missing_workflow", stage: "load", file: ws.path("flow.py") });
    expect(d.message).toMatch(message);
    expect(d.hint).toContain("workflow = wf.build()");
  });

  test.each([
    ["SystemExit", "import sys\nsys.exit(3)\n", "SystemExit: 3"],
    ["KeyboardInterrupt", "raise KeyboardInterrupt\n", "KeyboardInterrupt"],
  ])("module-level %s is a load_error, and the worker keeps answering", async (_name, source, message) => {
    const ws = workspace({ "flow.py": source });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("flow.py"), packageDir: null }));
    expect(d).toMatchObject({ code: "load_error", message, line: source.split("\n").length - 1 });
    expect(worker.alive).toBe(true);
    await worker.close();
    expect((await worker.exited).code).toBe(0);
  });

  test("load_timeout: the limit is enforced by killing the worker, saying where it was and what it printed", async () => {
    const ws = workspace({
      "slow/slow.py": `import steps\n${ECHO}`,
      "slow/steps.py": 'import time\nprint("about to hang")\n\ndef wait():\n    time.sleep(60)\n\nwait()\n',
    });
    const worker = await start(ws);
    const started = Date.now();
    const result = await worker.load(
      { entry: ws.path("slow/slow.py"), packageDir: ws.path("slow") },
      { timeoutMs: 1_000 },
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    const d = failure(result);
    expect(d).toMatchObject({
      code: "load_timeout",
      stage: "load",
      message: "loading the workflow did not finish within 1 seconds (stopped here)",
      file: ws.path("slow/steps.py"),
      line: 5,
      source_line: "    time.sleep(60)",
      notes: [
        { message: "called from", file: ws.path("slow/steps.py"), line: 7 },
        { message: "imported from", file: ws.path("slow/slow.py"), line: 1 },
      ],
    });
    expect(result.output.text).toBe("about to hang\n");
    expect((await worker.exited).signal).toBe("SIGKILL");
  });

  test("worker_failed: a worker that dies while loading, with its stderr", async () => {
    const ws = workspace({ "die.py": 'import os, sys\nos.write(2, b"dying now\\n")\nos._exit(7)\n' });
    const worker = await start(ws);
    const d = failure(await worker.load({ entry: ws.path("die.py"), packageDir: null }));
    expect(d).toMatchObject({ code: "worker_failed", stage: "load", file: ws.path("die.py") });
    expect(d.message).toContain("exited with code 7");
    expect(d.message).toContain("dying now");
    expect(d.traceback).toContain("dying now");
  });

  test("load output is cut at 64 KiB of UTF-8 on a character boundary", async () => {
    // 65,535 ASCII bytes, then a 2-byte character that does not fit.
    const ws = workspace({
      "big.py": `import sys\nsys.stdout.write("a" * 65535)\nprint("é" * 10)\nprint("x" * 1000)\n${ECHO}`,
    });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("big.py"), packageDir: null });
    expect(result.ok).toBe(true);
    expect(result.output.truncated).toBe(true);
    expect(result.output.text).toBe("a".repeat(65535));
  });

  test("output from threads started by top-level code belongs to the load output", async () => {
    const ws = workspace({
      "threads.py": `import threading\nt = threading.Thread(target=lambda: print("from a thread"))\nt.start()\nt.join()\nprint("stderr too", file=__import__("sys").stderr)\n${ECHO}`,
    });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("threads.py"), packageDir: null });
    expect(result.output.text).toBe("from a thread\nstderr too\n");
  });

  test("a worker loads one workflow", async () => {
    const ws = workspace({ "echo.py": ECHO });
    const worker = await start(ws);
    await worker.load({ entry: ws.path("echo.py"), packageDir: null });
    await expect(worker.load({ entry: ws.path("echo.py"), packageDir: null })).rejects.toMatchObject({
      code: "protocol_error",
    });
  });

  test("the entry runs as a module named after its file, so dataclasses and pickling work", async () => {
    const ws = workspace({
      "my_flow.py": `from __future__ import annotations\nimport dataclasses, pickle\n@dataclasses.dataclass\nclass Point:\n    x: int\nprint(__name__, pickle.loads(pickle.dumps(Point(1))))\n${ECHO}`,
    });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("my_flow.py"), packageDir: null });
    expect(result.ok).toBe(true);
    expect(result.output.text).toBe("my_flow Point(x=1)\n");
  });

  test("top-level code may run its own event loop", async () => {
    const ws = workspace({
      "aio.py": `import asyncio\nasync def fetch():\n    return "config"\nCONFIG = asyncio.run(fetch())\nprint(CONFIG)\n${ECHO}`,
    });
    const worker = await start(ws);
    const result = await worker.load({ entry: ws.path("aio.py"), packageDir: null });
    expect(result).toMatchObject({ ok: true, output: { text: "config\n" } });
    expect(await worker.invoke(node("echo", "still works"))).toMatchObject({
      ok: true,
      value: { text: "still works" },
    });
  });
});

test("the cache folder is where compiled files go", async () => {
  const ws = workspace(
    { "flow/flow.py": `import helper\n${ECHO}`, "flow/helper.py": "X = 1\n" },
    { ownCache: true },
  );
  const worker = await start(ws);
  await worker.load({ entry: ws.path("flow/flow.py"), packageDir: ws.path("flow") });
  const compiled = join(ws.cache, ws.path("flow").slice(1));
  expect(readdirSync(compiled).some((name) => name.startsWith("helper."))).toBe(true);
});
