import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ECHO_WORKFLOW, tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine, type EngineEvent } from "../src/index";

/** An engine over a temporary project, with its own configuration directory. */
function project(tree: Record<string, string>) {
  const cwd = tmpDir();
  writeTree(cwd, tree);
  const env = { ...process.env, CHRYS_HOME: join(cwd, ".home") };
  return { cwd, engine: createEngine({ cwd, env }) };
}

const ASKER = `from chrys.workflows import NodeContext, Question, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Asker")


async def pick(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
    ctx.emit("asking")
    answer = await ctx.ask(Question("Which areas?", options=["API", "Storage", "UI"], multi_select=True))
    name = await ctx.ask("Your name?")
    return WorkflowValue(text=f"{name}: {', '.join(answer.selected)}", data={"selected": list(answer.selected)})


node = wf.python("pick", pick)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

const FLAKY = `from pathlib import Path

from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Flaky")
MARKER = Path(__file__).parent / "marker"


def first(value: WorkflowValue) -> str:
    return value.text + "!"


def flaky(value: WorkflowValue) -> str:
    if not MARKER.exists():
        MARKER.write_text("failed once")
        raise RuntimeError("not yet")
    return value.text.upper()


a = wf.python("first", first)
b = wf.python("flaky", flaky)
wf.edge(a, b)
wf.start(a)
wf.output(b)
workflow = wf.build()
`;

describe("the engine API an embedding app uses", () => {
  it("lists, previews and trusts a project workflow, then runs it without trust: true", async () => {
    const { engine } = project({ ".chrys/workflows/flaky.py": FLAKY });
    const listed = await engine.list();
    expect(listed.workflows.find((w) => w.id === "flaky")).toMatchObject({
      source: "project",
      layout: "file",
      title: "",
    });

    // Before trust, a preview shows the source and the declared environment without running any of it.
    const preview = await engine.preview("flaky");
    expect(preview).toMatchObject({
      id: "flaky",
      source: "project",
      trust: { required: true, trusted: false, changed: [] },
      definition: null,
    });
    expect(preview?.files.map((f) => f.path)).toEqual(["flaky.py"]);
    expect(preview?.files[0]?.text).toContain("def flaky(");
    expect(preview?.environment?.version).toMatch(/^3\.\d+/);

    const untrusted = await engine.run({ workflowId: "flaky", input: "x" }).result;
    expect(untrusted).toMatchObject({ status: "rejected", code: "trust_required" });

    expect(await engine.trust("flaky")).toEqual({ ok: true, title: "Flaky" });
    expect((await engine.list()).workflows.find((w) => w.id === "flaky")?.title).toBe("Flaky");
    // Once trusted, previewing runs the top level and shows the built graph.
    expect(await engine.preview("flaky")).toMatchObject({
      trust: { required: true, trusted: true, changed: [] },
      definition: {
        title: "Flaky",
        nodes: [
          { id: "first", kind: "python" },
          { id: "flaky", kind: "python" },
        ],
        edges: 1,
      },
    });
    // Trusted now: the run is accepted (and fails the first time by design, under the CLI's `fail` policy).
    const accepted = await engine.run({ workflowId: "flaky", input: "x" }).result;
    expect(accepted).toMatchObject({
      status: "finished",
      outcome: "node_failed",
      node_id: "flaky",
      error: expect.stringContaining("not yet"),
    });
    await engine.close();
  });

  it("answers ctx.ask through the ask handler and streams typed events", async () => {
    const builtin = tmpDir();
    writeTree(builtin, { "asker.py": ASKER });
    const withBuiltin = createEngine({
      cwd: tmpDir(),
      env: { ...process.env, CHRYS_HOME: join(builtin, ".home") },
      builtinDir: builtin,
    });
    const asked: string[] = [];
    const run = withBuiltin.run(
      { workflowId: "asker" },
      {
        ask: async (request) => {
          const q = request.questions[0]!;
          asked.push(q.question);
          return q.options.length > 0
            ? { status: "answered", answers: [{ selected: ["API", "UI"], text: "" }] }
            : { status: "answered", answers: [{ selected: [], text: "Ada" }] };
        },
      },
    );
    const events: EngineEvent[] = [];
    for (const type of [
      "workflow_run_start",
      "emit",
      "question",
      "answer",
      "node_completed",
      "workflow_run_end",
    ] as const) {
      run.events.on(type, (e: EngineEvent) => events.push(e));
    }
    const report = await run.result;
    expect(report).toMatchObject({
      status: "finished",
      outcome: "completed",
      outputs: [{ node_id: "pick", text: "Ada: API, UI", data: { selected: ["API", "UI"] } }],
    });
    expect(asked).toEqual(["Which areas?", "Your name?"]);
    expect(events.map((e) => e.type)).toEqual([
      "workflow_run_start",
      "emit",
      "question",
      "answer",
      "question",
      "answer",
      "node_completed",
      "workflow_run_end",
    ]);
    await withBuiltin.close();
  });

  it("fails ctx.ask with ask_unavailable when the front end cannot ask", async () => {
    const builtin = tmpDir();
    writeTree(builtin, { "asker.py": ASKER });
    const engine = createEngine({
      cwd: tmpDir(),
      env: { ...process.env, CHRYS_HOME: join(builtin, ".home") },
      builtinDir: builtin,
    });
    const report = await engine.run({ workflowId: "asker" }).result;
    expect(report).toMatchObject({
      status: "finished",
      outcome: "node_failed",
      node_id: "pick",
      error_class: "ask_unavailable",
    });
    await engine.close();
  });

  it("under the pause policy a failed node awaits retry, and retryNode re-runs it", async () => {
    const { engine } = project({ ".chrys/workflows/flaky.py": FLAKY });
    const run = engine.run({ workflowId: "flaky", input: "go", trust: true, policy: "pause" });
    run.events.on("node_awaiting_retry", (e) => {
      expect(e.activation_id).toBe("flaky@iter#1");
      expect(run.retryNode(e.activation_id)).toEqual({ ok: true });
    });
    const report = await run.result;
    expect(report).toMatchObject({ status: "finished", outcome: "completed", outputs: [{ text: "GO!" }] });
    await engine.close();
  });

  it("ends each session that started a run once, when it closes", async () => {
    const { cwd, engine } = project({
      ".chrys/workflows/a.py": ECHO_WORKFLOW,
      ".chrys/workflows/b.py": ECHO_WORKFLOW,
    });
    const log = join(cwd, "hooks.log");
    writeTree(join(cwd, ".home"), {
      "hooks.json": JSON.stringify({
        hooks: ["session_start", "session_restored", "session_end"].map((event) => ({
          event,
          command: `cat >> '${log}'`,
          blocking: true,
        })),
      }),
    });
    const sessionOf = async (request: Parameters<typeof engine.run>[0]) => {
      const report = await engine.run({ ...request, trust: true }).result;
      expect(report).toMatchObject({ status: "finished", outcome: "completed" });
      return (report as { session_id: string }).session_id;
    };
    const first = await sessionOf({ workflowId: "a" });
    const second = await sessionOf({ workflowId: "b" });
    expect(await sessionOf({ workflowId: "a", sessionId: first })).toBe(first); // started here already
    const hooks = () =>
      readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { event: string; session_id: string; workflow_id: string });
    expect(hooks().map((h) => [h.event, h.session_id])).toEqual([
      ["session_start", first],
      ["session_start", second],
    ]);
    await engine.close();
    expect(hooks().slice(2)).toEqual([
      expect.objectContaining({ event: "session_end", session_id: first, workflow_id: "a", cwd }),
      expect.objectContaining({ event: "session_end", session_id: second, workflow_id: "b", cwd }),
    ]);
    await engine.close(); // nothing left to end
    expect(hooks()).toHaveLength(4);
  });

  it("refuses a run cancelled before it was accepted, and cancels one that runs", async () => {
    const { engine } = project({
      ".chrys/workflows/slow.py": `import time
from chrys.workflows import WorkflowBuilder
wf = WorkflowBuilder("Slow")
def nap(value):
    time.sleep(0.2)
    return value
a = wf.python("a", nap)
b = wf.python("b", nap)
wf.edge(a, b)
wf.start(a)
wf.output(b)
workflow = wf.build()
`,
    });
    const refused = engine.run({ workflowId: "slow", trust: true });
    expect(refused.cancel()).toEqual({ ok: true });
    expect(await refused.result).toMatchObject({ status: "rejected", code: "cancelled" });
    const run = engine.run({ workflowId: "slow", trust: true });
    run.events.on("node_started", () => run.cancel());
    const report = await run.result;
    expect(report).toMatchObject({ status: "finished", outcome: "cancelled", reason: "user_cancelled" });
    await engine.close();
  });
});
