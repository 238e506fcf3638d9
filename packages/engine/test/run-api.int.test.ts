import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine, type EngineEvent, RunInspectionSchema, RunStatusSchema } from "../src/index";

/** An engine over a temporary project with its own configuration directory. */
function project(tree: Record<string, string>, options: { maxConcurrentAgents?: number } = {}) {
  const cwd = tmpDir();
  writeTree(cwd, tree);
  const env = { ...process.env, CHRYS_HOME: join(cwd, ".home") };
  return { cwd, engine: createEngine({ cwd, env, ...options }) };
}

/** The run's `events.jsonl`, read back as the records keep it. */
function loggedEvents(location: string | null): EngineEvent[] {
  return readFileSync(join(location!, "events.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
}

const PICKER = `from chrys.workflows import NodeContext, Question, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Picker")


async def pick(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
    answer = await ctx.ask(Question("Which area?", header="Area", options=["API", "UI"]))
    return WorkflowValue(text=f"{answer.choice}|{answer.text}", data=None)


node = wf.python("pick", pick)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

const FANOUT = `import time
from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Fan-out")


def start(value):
    return value


def branch(value):
    if value.text == "slow":
        time.sleep(0.6)
    return value


def done(value):
    return value


s = wf.python("s", start)
branches = [wf.python(f"b{i}", branch) for i in range(4)]
for b in branches:
    wf.edge(s, b)
j = wf.python("j", done)
wf.join(branches, j)
wf.start(s)
wf.output(j)
workflow = wf.build()
`;

const GATED = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Gated")


def prepare(value):
    return value.text + " prepared"


def deploy(value):
    return value.text + " deployed"


a = wf.python("prepare", prepare)
b = wf.python("deploy", deploy)
wf.edge(a, b)
wf.start(a)
wf.output(b)
workflow = wf.build()
`;

describe("the run API front ends drive", () => {
  it("a second subscriber joining mid-run from fromSeq 0 receives exactly the events in events.jsonl", async () => {
    const { engine } = project({ ".chrys/workflows/fanout.py": FANOUT });
    const run = engine.run({ workflowId: "fanout", input: "slow", trust: true });
    const first: EngineEvent[] = [];
    run.events.on("event", (e) => first.push(e));
    const late: EngineEvent[] = [];
    let subscribed: Promise<void> | null = null;
    run.events.on("node_completed", (e) => {
      if (e.node_id === "s" && subscribed === null) {
        subscribed = engine
          .subscribe(run.runId, (event) => late.push(event), { fromSeq: 0 })
          .then((s) => s.ready);
      }
    });
    const report = await run.result;
    await subscribed;
    expect(report).toMatchObject({ status: "finished", outcome: "completed" });
    const logged = loggedEvents(report.status === "finished" ? report.location : null);
    expect(late.map((e) => e.seq)).toEqual(logged.map((e) => e.seq));
    expect(late).toEqual(logged);
    // The starter's listener saw the same stream; host events come first and are in the log.
    expect(first.map((e) => [e.seq, e.type])).toEqual(logged.map((e) => [e.seq, e.type]));
    expect(logged[0]).toMatchObject({ type: "run_accepted", workflow_id: "fanout", workflow_kind: "python" });
    // A subscriber after the end replays from any sequence number.
    const tail: EngineEvent[] = [];
    await (await engine.subscribe(run.runId, (e) => tail.push(e), { fromSeq: 5 })).ready;
    expect(tail.map((e) => e.seq)).toEqual(logged.filter((e) => e.seq >= 5).map((e) => e.seq));
    await engine.close();
  });

  it("answers a question through answer() from a caller other than the starter, refusing wrong answers while it waits", async () => {
    const { engine } = project({ ".chrys/workflows/picker.py": PICKER });
    const run = engine.run({ workflowId: "picker", trust: true, acceptAnswers: true });
    const question = await new Promise<Extract<EngineEvent, { type: "question" }>>((resolve) =>
      run.events.on("question", resolve),
    );
    // Another front end finds the run in the registry and sees the full question.
    const other = engine.getRun(run.runId)!;
    const inspection = RunInspectionSchema.parse(await engine.inspect(run.runId));
    expect(inspection.pending_questions).toEqual([
      {
        ask_id: question.ask_id,
        node_id: "pick",
        activation_id: "pick@iter#1",
        attempt: 1,
        question_id: 1,
        questions: [
          {
            question: "Which area?",
            header: "Area",
            options: [
              { label: "API", description: "" },
              { label: "UI", description: "" },
            ],
            multi_select: false,
          },
        ],
      },
    ]);
    const wrong = engine.answer(run.runId, question.ask_id, [{ selected: ["Storage"], text: "" }]);
    expect(wrong).toMatchObject({ ok: false, code: "answer_invalid" });
    const double = other.answer(question.ask_id, [{ selected: ["API", "UI"], text: "" }]);
    expect(double).toMatchObject({ ok: false, code: "answer_invalid" });
    expect(double.ok === false && double.message).toMatch(/single-select/);
    expect((await other.inspect()).pending_questions).toHaveLength(1);
    expect(other.answer(question.ask_id, [{ selected: ["UI"], text: "later" }])).toEqual({ ok: true });
    const report = await run.result;
    expect(report).toMatchObject({
      status: "finished",
      outcome: "completed",
      outputs: [{ text: "UI|later" }],
    });
    // The log keeps the summary; the full questions are beside it and come back on replay.
    const logged = loggedEvents(report.status === "finished" ? report.location : null);
    const line = logged.find((e) => e.type === "question")!;
    expect(line).not.toHaveProperty("questions");
    const replay: EngineEvent[] = [];
    await (await engine.subscribe(run.runId, (e) => replay.push(e))).ready;
    expect(replay.find((e) => e.type === "question")).toMatchObject({ questions: question.questions });
    await engine.close();
  });

  it("fails the node with the handler's own message when an ask handler throws", async () => {
    const { engine } = project({ ".chrys/workflows/picker.py": PICKER });
    const report = await engine.run(
      { workflowId: "picker", trust: true },
      {
        ask: async () => {
          throw new Error("the approvals service is down");
        },
      },
    ).result;
    expect(report).toMatchObject({
      status: "finished",
      outcome: "node_failed",
      node_id: "pick",
      error_class: "ask_handler_failed",
      error: "the ask handler failed: the approvals service is down",
    });
    expect(JSON.stringify(report)).not.toMatch(/ask_unavailable|icode workflow|the CLI/);
    await engine.close();
  });

  it("holds a node at its approval gate until approveNode, and inspects it while it waits", async () => {
    const { engine } = project({ ".chrys/workflows/gated.py": GATED });
    const run = engine.run({ workflowId: "gated", input: "v1", trust: true, approvals: ["deploy"] });
    await new Promise((resolve) => run.events.on("node_waiting_approval", resolve));
    const waiting = await run.inspect();
    expect(waiting.waiting_approvals).toEqual(["deploy@iter#1"]);
    expect(waiting.activations.map((a) => [a.node_id, a.state])).toEqual([
      ["prepare", "completed"],
      ["deploy", "waiting_approval"],
    ]);
    expect(run.retryNode("deploy@iter#1")).toMatchObject({ ok: false, code: "not_awaiting_retry" });
    expect(run.approveNode("deploy@iter#1")).toEqual({ ok: true });
    expect(await run.result).toMatchObject({
      outcome: "completed",
      outputs: [{ text: "v1 prepared deployed" }],
    });
    await engine.close();
  });

  it("inspects every activation during a fan-out, and lists the run in the registry", async () => {
    const { engine } = project({ ".chrys/workflows/fanout.py": FANOUT });
    const run = engine.run({ workflowId: "fanout", input: "slow", trust: true });
    expect(RunStatusSchema.parse(run.status())).toMatchObject({ state: "admitting", session_id: null });
    await new Promise<void>((resolve) => {
      let started = 0;
      run.events.on("attempt_started", () => {
        if (++started === 5) resolve();
      });
    });
    const mid = await engine.inspect(run.runId);
    const states = Object.fromEntries(mid.activations.map((a) => [a.node_id, a.state]));
    expect(states).toMatchObject({
      s: "completed",
      b0: "running",
      b1: "running",
      b2: "running",
      b3: "running",
    });
    expect(engine.runs().map((r) => [r.run_id, r.state])).toEqual([[run.runId, "running"]]);
    const report = await run.result;
    const end = await engine.inspect(run.runId);
    expect(end).toMatchObject({ state: "finished", outcome: "completed" });
    expect(end.activations.map((a) => a.node_id)).toEqual(["s", "b0", "b1", "b2", "b3", "join:j", "j"]);
    expect(engine.runs()).toMatchObject([{ run_id: run.runId, state: "finished", outcome: "completed" }]);
    expect(report.status === "finished" && report.location).toBe(run.status().location);
    await engine.close();
  });

  it("refuses a request with a wrong type, naming the field, and records nothing", async () => {
    const { engine, cwd } = project({ ".chrys/workflows/gated.py": GATED });
    const bad = await engine.run({ workflowId: "gated", timeoutSeconds: -1 }).result;
    expect(bad).toMatchObject({ status: "rejected", code: "request_invalid" });
    expect(bad.status === "rejected" && bad.message).toMatch(/^timeoutSeconds: /);
    const typed = await engine.run({ workflowId: "gated", policy: "sometimes" as never }).result;
    expect(typed.status === "rejected" && typed.message).toMatch(/^policy: /);
    const huge = await engine.run({ workflowId: "gated", input: "x".repeat(4_194_305) }).result;
    expect(huge).toMatchObject({ status: "rejected", code: "input_too_large" });
    expect(await engine.history.sessions()).toEqual([]);
    expect(cwd).toBeTruthy();
    await engine.close();
  });

  it("reads recorded runs back: sessions, runs, details with failures, logs", async () => {
    const { engine } = project({
      ".chrys/workflows/boom.py": `from chrys.workflows import NodeContext, WorkflowBuilder
wf = WorkflowBuilder("Boom")
def boom(value, ctx: NodeContext):
    print("about to fail")
    ctx.emit("working")
    raise ValueError("no luck")
n = wf.python("n", boom)
wf.start(n)
wf.output(n)
workflow = wf.build()
`,
    });
    const report = await engine.run({ workflowId: "boom", trust: true }).result;
    expect(report).toMatchObject({ outcome: "node_failed" });
    const [session] = await engine.history.sessions();
    expect(session).toMatchObject({ workflow_id: "boom", runs: 1 });
    const runs = await engine.history.runs({ sessionId: session!.session_id });
    expect(runs).toMatchObject([{ run_id: report.run_id, state: "finished", outcome: "node_failed" }]);
    const details = await engine.history.show(report.run_id);
    expect(details.failures).toMatchObject([
      {
        node_id: "n",
        final: true,
        error: { class: "exception", message: expect.stringContaining("no luck") },
      },
    ]);
    expect(details.failures[0]!.error.traceback).toMatch(/boom\.py", line 6/);
    const logs = await engine.history.logs(report.run_id, { nodeId: "n" });
    expect(logs.captured).toMatchObject([{ node_id: "n", attempt: 1, stdout: { text: "about to fail\n" } }]);
    expect(logs.emits).toMatchObject([{ node_id: "n", text: "working" }]);
    await expect(engine.history.show("0".repeat(32))).rejects.toMatchObject({ code: "run_not_found" });
    await engine.close();
  });
});
