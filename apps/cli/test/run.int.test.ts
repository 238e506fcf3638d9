/**
 * `icode workflow run` end to end, for runs that complete: built-in and project workflows (file and folder)
 * in text, quiet and JSON mode, where each kind of output goes, the scheduling rules a user sees in the
 * outputs (default merge, join with combine, skipped outputs, loop, switch), and sessions (`-s`).
 * Every test spawns the built CLI with real Python and checks the run record on disk.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  diagnosticsFileName,
  icode,
  ofType,
  project,
  readRun,
  readSession,
  recordOf,
  runEnd,
  runIds,
  runJson,
  SLOW,
  sessionIds,
} from "./run-helpers";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Two nodes, both outputs, declared in the order b, a (a runs first): prints, emits and writes fd 1. */
const PRINTS = String.raw`import os
import sys

from chrys.workflows import NodeContext, WorkflowBuilder, WorkflowValue

print("top-level says hi")
wf = WorkflowBuilder("Prints")


def a(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
    print("printed in a")
    print("to stderr in a", file=sys.stderr)
    ctx.emit("emitting from a")
    os.write(1, b"raw fd write\n")
    return WorkflowValue(text="A:" + value.text, data={"n": 1})


def b(value: WorkflowValue) -> str:
    return "B:" + value.text


na = wf.python("a", a)
nb = wf.python("b", b)
wf.edge(na, nb)
wf.start(na)
wf.output(nb)
wf.output(na)
workflow = wf.build()
`;

/** A workflow folder: imports a sibling module and reads a file relative to `__file__`. */
const FOLDER = {
  ".chrys/workflows/greet/greet.py": `from pathlib import Path

from chrys.workflows import WorkflowBuilder, WorkflowValue
from steps import shout

GREETING = (Path(__file__).parent / "prompts" / "greeting.txt").read_text().strip()
wf = WorkflowBuilder("Greeter")


def greet(value: WorkflowValue) -> str:
    return shout(GREETING + ", " + value.text)


node = wf.python("greet", greet)
wf.start(node)
wf.output(node)
workflow = wf.build()
`,
  ".chrys/workflows/greet/steps.py": "def shout(text):\n    return text.upper() + '!'\n",
  ".chrys/workflows/greet/prompts/greeting.txt": "hello\n",
  ".chrys/workflows/greet/.notes": "not part of the source\n",
};

/**
 * Fan-out and fan-in without conditions: `d` merges `b` and `c` by default (b finishes last, but its edge is
 * declared first); `joined` combines `p` and `q` (q finishes first); `q` gets `start`'s data unchanged.
 */
const MERGE = `import time

from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Merge")


def start(value):
    return WorkflowValue(text=value.text, data={"n": len(value.text)})


def slow_b(value):
    time.sleep(0.3)
    return "one"


def merged(value):
    return WorkflowValue(text=value.text, data={"data_was_none": value.data is None})


def p(value):
    time.sleep(0.2)
    return WorkflowValue(text="P", data={"from": "p"})


def combine(sources):
    return WorkflowValue(
        text="|".join(s.node_id + "=" + s.value.text for s in sources),
        data=[{"node_id": s.node_id, "activation_id": s.activation_id, "data": s.value.data} for s in sources],
    )


s = wf.python("start", start)
b = wf.python("b", slow_b)
c = wf.python("c", lambda value: "two")
d = wf.python("d", merged)
wf.edge(s, b)
wf.edge(s, c)
wf.edge(b, d)
wf.edge(c, d)
np = wf.python("p", p)
nq = wf.python("q", lambda value: "Q" + str(value.data["n"]))
joined = wf.python("joined", lambda value: value)
wf.edge(s, np)
wf.edge(s, nq)
wf.join([np, nq], joined, combine=combine)
wf.start(s)
wf.output(d)
wf.output(joined)
workflow = wf.build()
`;

/**
 * Skips: `r` is never selected (and is an output declared first), so `joined` combines only `s2`;
 * `lonely`'s join has no source that provides input, so it and its `combine` are skipped too.
 */
const SKIPS = `import os

from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Skips")


def combine(sources):
    return "+".join(s.node_id + "=" + s.value.text for s in sources)


def never_called(sources):
    open("combine-called.marker", "w").close()
    return "should not happen"


s = wf.python("start", lambda value: value)
r = wf.python("r", lambda value: "R")
s2 = wf.python("s2", lambda value: "S2")
r2 = wf.python("r2", lambda value: "R2")
joined = wf.python("joined", lambda value: value)
lonely = wf.python("lonely", lambda value: "lonely ran")
wf.edge(s, r, when=lambda value: value.text == "never")
wf.edge(s, s2, when=lambda value: True)
wf.edge(s, r2, when=lambda value: False)
wf.join([r, s2], joined, combine=combine)
wf.join([r2], lonely, combine=never_called)
wf.start(s)
wf.output(r)
wf.output(joined)
wf.output(lonely)
workflow = wf.build()
`;

/** A loop that appends "+" until the text has 3 characters (the `until` reads the exit node's data). */
const LOOP = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Loop")


def body(scope):
    g = scope.python("grow", lambda value: value.text + "+")
    c = scope.python("check", lambda value: WorkflowValue(text=value.text, data={"len": len(value.text)}))
    scope.edge(g, c)
    return g, c


loop = wf.loop("repeat", body, until=lambda value: value.data["len"] >= 3, max_iterations=5)
after = wf.python("after", lambda value: "after:" + value.text)
wf.edge(loop, after)
wf.start(loop)
wf.output(after)
workflow = wf.build()
`;

/** A switch: the first true case wins (later ones are not evaluated), else the default. */
const SWITCH = `from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("Switch")


def later_case(value):
    open("later-case-" + value.text + ".marker", "a").close()
    return True


route = wf.python("route", lambda value: value)
big = wf.python("big", lambda value: "big:" + value.text)
also = wf.python("also", lambda value: "also:" + value.text)
small = wf.python("small", lambda value: "small:" + value.text)
wf.switch(route, [(lambda value: len(value.text) > 3, big), (later_case, also)], default=small)
wf.start(route)
wf.output(big)
wf.output(also)
wf.output(small)
workflow = wf.build()
`;

describe.concurrent("icode workflow run: built-in workflows", SLOW, () => {
  it("runs echo in text mode: the output on stdout, progress and the closing line on stderr", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "echo", "--input", "Hello"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("Hello\n");
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines.some((l) => l.includes("echo") && !l.includes("✓ Workflow completed"))).toBe(true);
    expect(lines[lines.length - 1]).toBe("✓ Workflow completed");
    // A built-in workflow needs no trust, so nothing is written to the trust store.
    expect(existsSync(join(p.home, "trust"))).toBe(false);

    const [sessionId] = sessionIds(p.home);
    expect(sessionId).toMatch(UUID);
    const [runId] = runIds(p.home, sessionId!);
    expect(runId).toMatch(/^[0-9a-f]{32}$/);
    const rec = readRun(p.home, sessionId!, runId!);
    expect(rec.input).toEqual({ text: "Hello", data: null });
    expect(rec.source).toEqual(["echo.py"]);
    expect(rec.definition).toMatchObject({ title: "Echo", start: "echo", outputs: ["echo"] });
    expect(runEnd(rec.events)).toMatchObject({ outcome: "completed", reason: "", node_id: "", error: "" });
    expect(rec.outputs).toEqual([
      {
        node_id: "echo",
        activation_id: "echo@iter#1",
        text: "Hello",
        data: { characters: 5, lines: 1, utf8_bytes: 5, empty: false },
      },
    ]);
    expect(rec.output).toEqual({
      load: { text: "", truncated: false },
      native: { text: "", dropped_bytes: 0 },
    });
    expect(rec.nodes.size).toBe(0); // nothing printed: no diagnostics file
    expect(readSession(p.home, sessionId!)).toMatchObject({
      kind: "workflow",
      session_id: sessionId,
      workflow_id: "echo",
      source: "builtin",
      workspace: p.dir,
      runs: [runId],
    });
  });

  it("-q shows no progress, not even the closing line", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "echo", "-q", "--input", "quiet please"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("quiet please\n");
    expect(r.stderr).toBe("");
  });

  it("--json prints one line with every top-level field of the spec, and nothing on stderr", async () => {
    const p = project();
    const r = await runJson(p, "echo", ["--input", "Hi"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(Object.keys(JSON.parse(r.stdout)).sort()).toEqual(
      [
        "diagnostics",
        "duration",
        "error",
        "node_id",
        "outcome",
        "outputs",
        "reason",
        "run_id",
        "session_id",
      ].sort(),
    );
    expect(r.json).toMatchObject({
      outcome: "completed",
      reason: "",
      node_id: "",
      error: "",
      diagnostics: { load: { text: "", truncated: false }, native: { text: "", dropped_bytes: 0 } },
      outputs: [
        {
          node_id: "echo",
          activation_id: "echo@iter#1",
          text: "Hi",
          data: { characters: 2, lines: 1, utf8_bytes: 2, empty: false },
        },
      ],
    });
    expect(r.json.session_id).toMatch(UUID);
    expect(sessionIds(p.home)).toEqual([r.json.session_id]);
    expect(runIds(p.home, r.json.session_id!)).toEqual([r.json.run_id]);
    const rec = recordOf(p, r.json);
    expect(rec.outputs).toEqual(r.json.outputs);
    expect(rec.output).toEqual(r.json.diagnostics);
  });

  it("passes multi-line --input through unchanged", async () => {
    const p = project();
    const input = "interactive: false\ndepth: deep\nhow are errors handled?";
    const text = await icode(p, ["workflow", "run", "echo", "-q", "--input", input]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toBe(`${input}\n`);
    const r = await runJson(p, "echo", ["--input", input]);
    expect(r.json.outputs[0]).toMatchObject({ text: input, data: { lines: 3 } });
    expect(recordOf(p, r.json).input).toEqual({ text: input, data: null });
  });

  it("runs word-stats: four parallel branches joined by combine into one report", async () => {
    const p = project();
    const r = await runJson(p, "word-stats", ["--input", "The quick brown fox jumps over the lazy dog"]);
    expect(r.exitCode).toBe(0);
    expect(r.json.outcome).toBe("completed");
    expect(r.json.outputs).toHaveLength(1);
    const [out] = r.json.outputs;
    expect(out).toMatchObject({
      node_id: "report",
      activation_id: "report@iter#1",
      data: {
        empty: false,
        words: { total: 9, unique: 8, longest: "quick" },
        lines: { total: 1, non_blank: 1, longest: 43 },
        characters: { total: 43, non_whitespace: 35, utf8_bytes: 43 },
      },
    });
    expect(out!.text.split("\n")[0]).toBe("Words: 9 (8 unique, average length 3.9, longest 'quick')");
    const rec = recordOf(p, r.json);
    const started = ofType(rec.events, "node_started").map((e) => e.activation_id);
    expect(started).toEqual(
      expect.arrayContaining([
        "prepare@iter#1",
        "count_words@iter#1",
        "count_lines@iter#1",
        "count_characters@iter#1",
        "top_words@iter#1",
        "join:report@iter#1",
        "report@iter#1",
      ]),
    );
    expect(runEnd(rec.events).outcome).toBe("completed");

    const text = await icode(p, [
      "workflow",
      "run",
      "word-stats",
      "--input",
      "The quick brown fox jumps over the lazy dog",
    ]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toBe(`${out!.text}\n`);
    expect(text.stderr.trimEnd().endsWith("✓ Workflow completed")).toBe(true);
  });
});

/** Large strings made by one node, passed on unchanged by the next, extended by the last. */
const BIG = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Large strings")


def make(value: WorkflowValue) -> WorkflowValue:
    accented = "é€😀" * 40_000
    return WorkflowValue(text="x" * 100_000, data=[accented, "x" * 100_000, accented])


def keep(value: WorkflowValue) -> WorkflowValue:
    return value


def extend(value: WorkflowValue) -> WorkflowValue:
    value.data.append("go")
    return value


nodes = [wf.python("make", make), wf.python("pass", keep), wf.python("extend", extend)]
wf.chain(*nodes)
wf.start(nodes[0])
wf.output(nodes[-1])
workflow = wf.build()
`;

describe.concurrent("icode workflow run: project workflows", SLOW, () => {
  it("a .py file in text mode: outputs in declaration order, one blank line apart; load output, emit and fd writes on stderr", async () => {
    const p = project({ ".chrys/workflows/prints.py": PRINTS });
    const r = await icode(p, ["workflow", "run", "prints", "--trust", "--input", "hi"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("B:A:hi\n\nA:hi\n");
    expect(r.stderr).toContain("top-level says hi"); // load output
    expect(r.stderr).toContain("emitting from a"); // ctx.emit is progress in text mode
    expect(r.stderr).toContain("raw fd write"); // output outside nodes
    expect(r.stderr).not.toContain("printed in a"); // print() in a node: only the diagnostics file
    expect(r.stderr).not.toContain("to stderr in a");
    expect(r.stderr.trimEnd().endsWith("✓ Workflow completed")).toBe(true);

    const [sessionId] = sessionIds(p.home);
    const [runId] = runIds(p.home, sessionId!);
    const rec = readRun(p.home, sessionId!, runId!);
    expect(rec.source).toEqual(["prints.py"]);
    expect(readFileSync(join(rec.dir, "source", "prints.py"), "utf8")).toBe(PRINTS);
    expect(rec.output).toEqual({
      load: { text: "top-level says hi\n", truncated: false },
      native: { text: "raw fd write\n", dropped_bytes: 0 },
    });
    const name = diagnosticsFileName("a@iter#1", 1);
    expect(name).toMatch(/^a@iter_1\.1\.diagnostics\.[0-9a-f]{8}\.json$/);
    expect([...rec.nodes.keys()]).toEqual([name]); // b printed nothing: no file
    const diag = rec.nodes.get(name)!;
    expect(diag).toMatchObject({ node_id: "a", activation_id: "a@iter#1", attempt: 1 });
    const captured = diag.phases.map((ph) => ph.stdout.text).join("");
    expect(captured).toContain("printed in a\n");
    expect(captured).toContain("to stderr in a\n");
    expect(captured).not.toContain("raw fd write");
    expect(diag.phases.every((ph) => ph.stdout.truncated === false)).toBe(true);
    expect(ofType(rec.events, "emit").map((e) => e.text)).toEqual(["emitting from a"]);
    expect(readSession(p.home, sessionId!)).toMatchObject({
      workflow_id: "prints",
      source: "project",
      workflow_path: join(p.dir, ".chrys", "workflows", "prints.py"),
      workspace: p.dir,
    });
  });

  it("-q keeps load output and output outside nodes but hides emit and node progress", async () => {
    const p = project({ ".chrys/workflows/prints.py": PRINTS });
    const r = await icode(p, ["workflow", "run", "prints", "--trust", "-q", "--input", "hi"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("B:A:hi\n\nA:hi\n");
    expect(r.stderr).toContain("top-level says hi");
    expect(r.stderr).toContain("raw fd write");
    expect(r.stderr).not.toContain("emitting from a");
    expect(r.stderr).not.toContain("Workflow completed");
    expect(r.stderr).not.toContain("printed in a");
  });

  it("--json: load output in diagnostics.load, fd writes in diagnostics.native, no emit or print anywhere", async () => {
    const p = project({ ".chrys/workflows/prints.py": PRINTS });
    const r = await runJson(p, "prints", ["--trust", "--input", "hi"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("emitting from a");
    expect(r.stderr).not.toContain("printed in a");
    expect(r.stderr).not.toContain("raw fd write");
    expect(r.json.diagnostics).toEqual({
      load: { text: "top-level says hi\n", truncated: false },
      native: { text: "raw fd write\n", dropped_bytes: 0 },
    });
    expect(r.stdout).not.toContain("printed in a");
    expect(r.json.outputs).toEqual([
      { node_id: "b", activation_id: "b@iter#1", text: "B:A:hi", data: null },
      { node_id: "a", activation_id: "a@iter#1", text: "A:hi", data: { n: 1 } },
    ]);
    const rec = recordOf(p, r.json);
    expect(rec.nodes.get(diagnosticsFileName("a@iter#1", 1))?.phases[0]?.stdout.text).toContain(
      "printed in a\n",
    );
    expect(runEnd(rec.events)).toMatchObject({ outcome: "completed", outputs: rec.outputs });
  });

  it("a workflow folder: sibling imports, files read relative to __file__, every file in the snapshot", async () => {
    const p = project(FOLDER);
    const r = await icode(p, ["workflow", "run", "greet", "--trust", "--input", "world"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("HELLO, WORLD!\n");
    expect(r.stderr).toContain("✓ Workflow completed");
    // No __pycache__ is created next to the workflow's files.
    expect(existsSync(join(p.dir, ".chrys", "workflows", "greet", "__pycache__"))).toBe(false);

    const [sessionId] = sessionIds(p.home);
    const [runId] = runIds(p.home, sessionId!);
    const rec = readRun(p.home, sessionId!, runId!);
    expect(rec.source).toEqual(["greet.py", "prompts/greeting.txt", "steps.py"]);
    expect(readFileSync(join(rec.dir, "source", "steps.py"), "utf8")).toBe(
      FOLDER[".chrys/workflows/greet/steps.py"],
    );
    expect(rec.outputs).toEqual([
      { node_id: "greet", activation_id: "greet@iter#1", text: "HELLO, WORLD!", data: null },
    ]);
    expect(readSession(p.home, sessionId!)).toMatchObject({
      workflow_id: "greet",
      // The entry file, as for a single file (docs/records.md): moving it to another folder is a new workflow.
      workflow_path: join(p.dir, ".chrys", "workflows", "greet", "greet.py"),
      source: "project",
    });
  });

  it("merges two sources by default in edge declaration order, and a join combines its sources in declaration order", async () => {
    const p = project({ ".chrys/workflows/merge.py": MERGE });
    const text = await icode(p, ["workflow", "run", "merge", "--trust", "-q", "--input", "hello"]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toBe("## b\none\n\n## c\ntwo\n\np=P|q=Q5\n");

    const r = await runJson(p, "merge", ["--input", "hello"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.outputs).toEqual([
      {
        node_id: "d",
        activation_id: "d@iter#1",
        text: "## b\none\n\n## c\ntwo",
        data: { data_was_none: true },
      },
      {
        node_id: "joined",
        activation_id: "joined@iter#1",
        text: "p=P|q=Q5",
        data: [
          { node_id: "p", activation_id: "p@iter#1", data: { from: "p" } },
          { node_id: "q", activation_id: "q@iter#1", data: null },
        ],
      },
    ]);
    const rec = recordOf(p, r.json);
    const d = ofType(rec.events, "node_started").find((e) => e.node_id === "d")!;
    expect(d.input).toEqual({ text: "## b\none\n\n## c\ntwo", data: null });
    expect(d.sources).toEqual(["b@iter#1", "c@iter#1"]);
    expect(ofType(rec.events, "node_completed").map((e) => e.activation_id)).toContain("join:joined@iter#1");
    expect(ofType(rec.events, "node_skipped")).toEqual([]);
  });

  it("skipped outputs leave no placeholder; a join combines only the sources that provided input", async () => {
    const p = project({ ".chrys/workflows/skips.py": SKIPS });
    const text = await icode(p, ["workflow", "run", "skips", "--trust", "-q", "--input", "x"]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toBe("s2=S2\n");

    const r = await runJson(p, "skips", ["--input", "x"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.outputs).toEqual([
      { node_id: "joined", activation_id: "joined@iter#1", text: "s2=S2", data: null },
    ]);
    expect(existsSync(join(p.dir, "combine-called.marker"))).toBe(false);
    const rec = recordOf(p, r.json);
    expect(
      ofType(rec.events, "node_skipped")
        .map((e) => [e.activation_id, e.reason])
        .sort(),
    ).toEqual([
      ["join:lonely@iter#1", "no_input"],
      ["lonely@iter#1", "no_input"],
      ["r2@iter#1", "no_input"],
      ["r@iter#1", "no_input"],
    ]);
    expect(runEnd(rec.events).outputs.map((o) => o.node_id)).toEqual(["joined"]);
    expect(rec.outputs).toEqual(r.json.outputs);
  });

  it("runs a loop until its stop condition holds, one iteration at a time", async () => {
    const p = project({ ".chrys/workflows/loop.py": LOOP });
    const text = await icode(p, ["workflow", "run", "loop", "--trust"]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toBe("after:+++\n");
    // One progress line per loop iteration.
    const iterationLines = text.stderr
      .split("\n")
      .filter((l) => l.includes("repeat") && l.includes("iteration"));
    expect(iterationLines).toHaveLength(3);

    const [sessionId] = sessionIds(p.home);
    const rec = readRun(p.home, sessionId!, runIds(p.home, sessionId!)[0]!);
    expect(ofType(rec.events, "loop_iteration").map((e) => e.loop_iteration)).toEqual([1, 2, 3]);
    expect(
      ofType(rec.events, "node_completed")
        .filter((e) => e.node_id === "grow")
        .map((e) => [e.activation_id, e.loop_id, e.iteration]),
    ).toEqual([
      ["grow@iter#1", "repeat", 1],
      ["grow@iter#2", "repeat", 2],
      ["grow@iter#3", "repeat", 3],
    ]);
    expect(ofType(rec.events, "node_completed").find((e) => e.node_id === "repeat")).toMatchObject({
      activation_id: "repeat@iter#1",
      value: { text: "+++", data: { len: 3 } },
    });

    const short = await runJson(p, "loop", ["--input", "abc"]);
    expect(short.exitCode).toBe(0);
    expect(short.json.outputs).toEqual([
      { node_id: "after", activation_id: "after@iter#1", text: "after:abc+", data: null },
    ]);
    expect(ofType(recordOf(p, short.json).events, "loop_iteration")).toHaveLength(1);
  });

  it("large strings pass through a chain whole, and the record stores each one once", async () => {
    const p = project({ ".chrys/workflows/big.py": BIG });
    const r = await runJson(p, "big", ["--input", "go", "--trust"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const accented = "é€😀".repeat(40_000);
    const plain = "x".repeat(100_000);
    expect(r.json.outputs).toEqual([
      {
        node_id: "extend",
        activation_id: "extend@iter#1",
        text: plain,
        data: [accented, plain, accented, "go"],
      },
    ]);

    const rec = recordOf(p, r.json);
    // Two distinct strings, each stored once in the run's pack, whatever the number of events holding them.
    const pack = readFileSync(join(rec.dir, "large-strings.utf8"));
    expect(pack.length).toBe(Buffer.byteLength(accented) + Buffer.byteLength(plain));
    // Events name them instead of holding them: every line stays small.
    const lines = readFileSync(join(rec.dir, "events.jsonl"), "utf8").trim().split("\n");
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(4_000);
    const passed = ofType(rec.events, "node_completed").find((e) => e.node_id === "pass");
    expect(passed?.value).toEqual({ text: "", data: ["", "", ""] });
    const named = (passed as unknown as { large_strings: { at: unknown[]; offset: number; bytes: number }[] })
      .large_strings;
    expect(
      named.map((entry) => [entry.at, pack.toString("utf8", entry.offset, entry.offset + entry.bytes)]),
    ).toEqual([
      [["value", "data", 0], accented],
      [["value", "data", 1], plain],
      [["value", "data", 2], accented],
      [["value", "text"], plain],
    ]);
    // The final outputs file keeps them whole.
    expect(rec.outputs).toEqual([{ ...r.json.outputs[0] }]);
  });

  it("a switch selects the first matching case, or the default, and the other branches are skipped", async () => {
    const p = project({ ".chrys/workflows/switch.py": SWITCH });
    const [small, big] = await Promise.all([
      icode(p, ["workflow", "run", "switch", "--trust", "-q", "--input", "ab"]),
      runJson(p, "switch", ["--trust", "--input", "abcd"]),
    ]);
    expect(small.exitCode, small.stderr).toBe(0);
    expect(big.exitCode, big.stderr).toBe(0);
    expect(big.json.outputs).toEqual([
      { node_id: "big", activation_id: "big@iter#1", text: "big:abcd", data: null },
    ]);
    expect(existsSync(join(p.dir, "later-case-abcd.marker"))).toBe(false); // not evaluated after a match
    const skippedBig = ofType(recordOf(p, big.json).events, "node_skipped").map((e) => e.node_id);
    expect(skippedBig.sort()).toEqual(["also", "small"]);
    // "ab": the first case is false, the second (later) one is true.
    expect(small.stdout).toBe("also:ab\n");
    expect(existsSync(join(p.dir, "later-case-ab.marker"))).toBe(true);
  });
});

describe.concurrent("icode workflow run: sessions", SLOW, () => {
  it("-s starts a new run in the same session: two run folders, listed in session.json", async () => {
    const p = project();
    const first = await runJson(p, "echo", ["--input", "one"]);
    expect(first.exitCode).toBe(0);
    const sid = first.json.session_id!;
    const second = await runJson(p, "echo", ["-s", sid, "--input", "two"]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.json.session_id).toBe(sid);
    expect(second.json.run_id).not.toBe(first.json.run_id);
    expect(second.json.outputs[0]?.text).toBe("two");
    expect(sessionIds(p.home)).toEqual([sid]);
    expect(runIds(p.home, sid)).toEqual([first.json.run_id, second.json.run_id].sort());
    expect(readSession(p.home, sid)["runs"]).toEqual([first.json.run_id, second.json.run_id]);
    expect(recordOf(p, second.json).input).toEqual({ text: "two", data: null });
    expect(runEnd(recordOf(p, first.json).events).outcome).toBe("completed");
  });

  it("-s with another workflow ID is refused with spec_changed, and no run is added", async () => {
    const p = project();
    const first = await runJson(p, "echo", ["--input", "one"]);
    const sid = first.json.session_id!;
    for (const json of [false, true]) {
      const r = await icode(p, [
        "workflow",
        "run",
        "word-stats",
        "-s",
        sid,
        "--input",
        "x",
        ...(json ? ["--json"] : []),
      ]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain("spec_changed");
      if (!json) expect(r.stdout).toBe("");
    }
    expect(runIds(p.home, sid)).toEqual([first.json.run_id]);
    expect(readSession(p.home, sid)["runs"]).toEqual([first.json.run_id]);
  });

  it("an unknown session is refused with exit 1 and creates nothing", async () => {
    const p = project();
    const r = await icode(p, [
      "workflow",
      "run",
      "echo",
      "-s",
      "0b7c2a4e-1f3d-4c5b-9a8e-7d6c5b4a3f21",
      "--input",
      "x",
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("0b7c2a4e-1f3d-4c5b-9a8e-7d6c5b4a3f21");
    expect(sessionIds(p.home)).toEqual([]);
  });
});
