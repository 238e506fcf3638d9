import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { node, type RunFixture, runFixture } from "../../test/run-helpers";
import { NODE_STATES, RUN_STATES } from "../store/records";
import { openSqlitePipelineStore } from "../store/sqlite/sqlite-store";
import { ScriptedExecutor } from "../testing";
import { controlPipelineRun } from "./control";
import type { StoredPipelineEvent } from "./events";
import type { NodeExecutor } from "./executor";
import type { Supervisor } from "./supervisor";
import { isDriverNodeTransition, NODE_TRANSITIONS } from "./transitions";

let fx: RunFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});
const f = () => fx!;
const control = (command: Parameters<typeof controlPipelineRun>[2], store = f().store) =>
  controlPipelineRun(store, f().runId, command, { owner: "cli", pollIntervalMs: 5 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every node_state event is a driver transition or a control action's, never anything else. */
function expectLegalNodeEvents(events: readonly StoredPipelineEvent[]) {
  for (const { event } of events) {
    if (event.type !== "node_state") continue;
    const byControl = Object.values(NODE_TRANSITIONS).some((row) => {
      const effect = row[event.from];
      return typeof effect === "object" && effect.to === event.to;
    });
    expect(isDriverNodeTransition(event.from, event.to) || byControl, `${event.from} → ${event.to}`).toBe(
      true,
    );
  }
}

describe("drivePipelineRun: a run from start to end", () => {
  it("runs a chain to success, renders only direct dependencies, reuses sessions, records everything", async () => {
    fx = await runFixture({
      name: "Chain",
      nodes: [
        node("a"),
        node("b", ["a"], { prompt_template: "B {{upstream.a.summary}} {{upstream.c.summary}}" }),
        node("c", ["b"], {
          prompt_template: "C {{upstream.a.summary}} {{upstream.b.json}}",
          reuse_session_of: "a",
        }),
      ],
    });
    const executor = new ScriptedExecutor({
      b: { events: [{ type: "correction", round: 1, problems: ["$.summary: required"] }] },
    });
    const seen: StoredPipelineEvent[] = [];
    const result = await f().drive(executor, { onEvent: (e) => seen.push(e) });
    expect(result).toMatchObject({ stop: "converged", run: { state: "succeeded" }, heldBy: null });
    expect(await f().states()).toEqual({ a: "succeeded", b: "succeeded", c: "succeeded" });
    expect(executor.callsOf("b")[0]!.prompt).toBe("B a done {{upstream.c.summary}}");
    expect(executor.callsOf("c")[0]!.prompt).toBe(
      `C {{upstream.a.summary}} ${JSON.stringify({ summary: "b done" }, null, 2)}`,
    );
    expect(executor.callsOf("c")[0]!.reuseSession).toBe("session-a-1");
    expect(executor.callsOf("a")[0]!.reuseSession).toBeNull();
    // a's session is continued by c, so the executor keeps it; nothing continues b's or c's.
    expect(["a", "b", "c"].map((id) => executor.callsOf(id)[0]!.keepSession)).toEqual([true, false, false]);

    const events = await f().store.listEvents(f().runId);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(seen).toEqual(events);
    expectLegalNodeEvents(events);
    expect(events.filter((e) => e.event.type === "node_event").map((e) => e.event)).toContainEqual({
      type: "node_event",
      node_id: "b",
      attempt: 1,
      event: { type: "correction", round: 1, problems: ["$.summary: required"] },
    });
    expect(events.map((e) => e.event.type)).toContain("supervision");

    // Records on disk: prompt.md and handoff.json per attempt, events.jsonl mirroring the events table.
    const dir = join(f().runDir, "nodes", "b", "attempt-1");
    expect(await readFile(join(dir, "prompt.md"), "utf8")).toBe("B a done {{upstream.c.summary}}");
    expect(JSON.parse(await readFile(join(dir, "handoff.json"), "utf8"))).toEqual({ summary: "b done" });
    const lines = (await readFile(join(f().runDir, "events.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual(events);

    const attempts = await f().store.listAttempts(f().runId);
    expect(attempts.map((a) => [a.node_id, a.attempt, a.status, a.corrections])).toEqual([
      ["a", 1, "succeeded", 0],
      ["b", 1, "succeeded", 1],
      ["c", 1, "succeeded", 0],
    ]);
    expect(attempts[1]).toMatchObject({
      prompt: "B a done {{upstream.c.summary}}",
      session_ref: "session-b-1",
    });
    expect(await f().store.getLease(f().runId)).toBeNull();
  });

  it("repairs a torn last line of events.jsonl and brings the mirror up to the store", async () => {
    fx = await runFixture({ name: "Torn", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    expect((await f().drive(executor)).stop).toBe("paused");
    const file = join(f().runDir, "events.jsonl");
    const whole = await readFile(file, "utf8");
    const lines = whole.trim().split("\n");
    // A killed driver left half a line, and the mirror misses the last three events.
    await writeFile(file, `${lines.slice(0, -3).join("\n")}\n{"run_id":"${f().runId}","seq":`);
    await control({ action: "retry_node", node_id: "a" });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    const mirrored = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(mirrored).toEqual(await f().store.listEvents(f().runId));
  });

  it.each([
    ["a line that is not JSON", "not json at all"],
    ["JSON that is not a stored event", '{"hello":"world"}'],
  ])("rewrites events.jsonl from the store when its last line is %s", async (_what, line) => {
    fx = await runFixture({ name: "Garbled", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    expect((await f().drive(executor)).stop).toBe("paused");
    const file = join(f().runDir, "events.jsonl");
    await writeFile(file, `${(await readFile(file, "utf8")).trim()}\n${line}\n`);
    await control({ action: "retry_node", node_id: "a" });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    const mirrored = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(mirrored).toEqual(await f().store.listEvents(f().runId));
  });

  it("replays events from any seq", async () => {
    fx = await runFixture({ name: "Two", nodes: [node("a"), node("b", ["a"])] });
    await f().drive(new ScriptedExecutor());
    const all = await f().store.listEvents(f().runId);
    expect(all.length).toBeGreaterThan(8);
    for (const from of [1, 2, 5, all.length, all.length + 1]) {
      expect(await f().store.listEvents(f().runId, { fromSeq: from })).toEqual(all.slice(from - 1));
    }
    expect(await f().store.listEvents(f().runId, { fromSeq: 3, limit: 2 })).toEqual(all.slice(2, 4));
  });

  it("never has more than maxParallel attempts in flight", async () => {
    fx = await runFixture({ name: "Wide", nodes: Array.from({ length: 12 }, (_, i) => node(`n${i}`)) });
    const executor = new ScriptedExecutor({}, { delayMs: 15 });
    const result = await f().drive(executor, { limits: { maxParallel: 3 } });
    expect(result.run.state).toBe("succeeded");
    expect(executor.calls).toHaveLength(12);
    expect(executor.maxInFlight).toBe(3);
  });

  it("launches 10 at once by default, and ICODE_PIPELINE_MAX_PARALLEL in env overrides it", async () => {
    const wide = { name: "Wide", nodes: Array.from({ length: 14 }, (_, i) => node(`n${i}`)) };
    fx = await runFixture(wide);
    const byDefault = new ScriptedExecutor({}, { delayMs: 15 });
    expect((await f().drive(byDefault)).run.state).toBe("succeeded");
    expect(byDefault.maxInFlight).toBe(10);
    await fx.cleanup();
    fx = await runFixture(wide);
    const overridden = new ScriptedExecutor({}, { delayMs: 15 });
    const result = await f().drive(overridden, { env: { ICODE_PIPELINE_MAX_PARALLEL: "4" } });
    expect(result.run.state).toBe("succeeded");
    expect(overridden.calls).toHaveLength(14);
    expect(overridden.maxInFlight).toBe(4);
    // The executor sees the same environment.
    expect(overridden.calls[0]!.env).toEqual({ ICODE_PIPELINE_MAX_PARALLEL: "4" });
  });

  it("drives 200 nodes in 20 layers of 10 (the issue's bench shape) with 10 launches at once", async () => {
    const nodes = Array.from({ length: 200 }, (_, i) => {
      const layer = Math.floor(i / 10);
      return node(
        `n${i}`,
        layer === 0 ? [] : Array.from({ length: 10 }, (_, k) => `n${(layer - 1) * 10 + k}`),
      );
    });
    fx = await runFixture({ name: "Bench", nodes });
    const executor = new ScriptedExecutor({}, { delayMs: 5 });
    const result = await f().drive(executor);
    expect(result.run.state).toBe("succeeded");
    expect(executor.calls).toHaveLength(200);
    expect(executor.maxInFlight).toBe(10);
  }, 30_000);

  it("records a rejecting executor as a failed node (pipeline_executor_failed)", async () => {
    fx = await runFixture({ name: "One", nodes: [node("a")], failure_policy: "fail_fast" });
    const broken: NodeExecutor = {
      runNode: async () => {
        throw new Error("kaput");
      },
      stopSessions: async () => {},
      close: async () => {},
    };
    const result = await f().drive(broken as ScriptedExecutor);
    expect(result.run.state).toBe("failed");
    expect(result.nodes[0]).toMatchObject({ state: "failed", error: { code: "pipeline_executor_failed" } });
  });
});

describe("the reference's Run states and Node states, each reached by a real run and recorded", () => {
  it.each([
    ["run", ["pending", "running", "paused", "succeeded", "failed", "canceled"]],
    [
      "node",
      [
        "pending",
        "ready",
        "waiting_approval",
        "launching",
        "running",
        "blocked",
        "succeeded",
        "failed",
        "canceled",
      ],
    ],
  ] as const)("the %s states are exactly the reference's", (kind, states) => {
    expect(kind === "run" ? [...RUN_STATES] : [...NODE_STATES]).toEqual(states);
  });

  it("every state is entered, with an event saying from where", async () => {
    const runStates = new Set<string>();
    const nodeStates = new Set<string>();
    const collect = async () => {
      runStates.add("pending"); // createRun's state, before any event
      nodeStates.add("pending");
      for (const { event } of await f().store.listEvents(f().runId)) {
        if (event.type === "run_state") runStates.add(event.to);
        if (event.type === "node_state") nodeStates.add(event.to);
      }
      expectLegalNodeEvents(await f().store.listEvents(f().runId));
      await f().cleanup();
      fx = null;
    };
    // pause: blocked and failed nodes pause the run; a gate waits; cancel ends it.
    fx = await runFixture({
      name: "All",
      nodes: [node("a"), node("b"), node("x"), node("g", [], { requires_approval: true })],
    });
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "blocked", reason: "stuck" }] },
      b: { outcomes: [{ status: "failed" }] },
      x: { delayMs: 30 },
    });
    expect((await f().drive(executor)).run.state).toBe("paused");
    expect(await f().states()).toEqual({ a: "blocked", b: "failed", x: "succeeded", g: "waiting_approval" });
    expect(await control({ action: "cancel" })).toMatchObject({
      result: { ok: true },
      run: { state: "canceled" },
    });
    expect((await f().states()).g).toBe("canceled");
    await collect();
    // succeeded
    fx = await runFixture({ name: "Ok", nodes: [node("a")] });
    expect((await f().drive(new ScriptedExecutor())).run.state).toBe("succeeded");
    await collect();
    // failed
    fx = await runFixture({ name: "Bad", nodes: [node("a")] }, { failure_policy: "fail_fast" });
    const failing = new ScriptedExecutor({ a: { outcomes: [{ status: "failed" }] } });
    expect((await f().drive(failing)).run.state).toBe("failed");
    await collect();
    expect([...runStates].sort()).toEqual([...RUN_STATES].sort());
    expect([...nodeStates].sort()).toEqual([...NODE_STATES].sort());
  });
});

describe("the reference's Run control actions, one row each, through the API that does it", () => {
  it("list_definitions, start, list_runs, inspect, pause/resume, cancel, approve_node, retry_node, skip_node, stop_sessions", async () => {
    fx = await runFixture({
      name: "Actions",
      nodes: [node("a"), node("gate", ["a"], { requires_approval: true }), node("b", ["gate"])],
    });
    const { store } = f();
    const seen = new Set<string>();
    // list_definitions: the runnable ones are the published ones; a draft is listed as a draft only.
    const draft = await store.createDefinition({ name: "Draft", nodes: [node("x")] });
    const runnable = await store.listDefinitions({ status: "published" });
    expect(runnable.map((d) => d.id)).toContain((await store.getRun(f().runId)).definition_id);
    expect(runnable.map((d) => d.id)).not.toContain(draft.id);
    seen.add("list_definitions");
    // start: definition_id and task_input.
    const started = await store.createRun({
      definition_id: (await store.getRun(f().runId)).definition_id,
      task_input: "second",
    });
    expect(started).toMatchObject({ state: "pending", task_input: "second" });
    seen.add("start");
    // list_runs: history and active runs.
    expect((await store.listRuns()).map((r) => r.run_id).sort()).toEqual([f().runId, started.run_id].sort());
    expect((await store.listRuns({ states: ["pending"] })).length).toBe(2);
    seen.add("list_runs");
    // pause / resume
    expect(await control({ action: "pause" })).toMatchObject({
      result: { ok: true },
      run: { state: "paused" },
    });
    expect(await control({ action: "resume" })).toMatchObject({
      result: { ok: true },
      run: { state: "running" },
    });
    seen.add("pause / resume");
    // approve_node: a waiting_approval node goes.
    const executor = new ScriptedExecutor({
      b: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    expect((await f().drive(executor, { stopAtGates: true })).stop).toBe("waiting_approval");
    // inspect: the node states of the run.
    expect((await store.getRunNodes(f().runId)).map((n) => [n.node_id, n.state])).toEqual([
      ["a", "succeeded"],
      ["gate", "waiting_approval"],
      ["b", "pending"],
    ]);
    seen.add("inspect");
    expect(await control({ action: "approve_node", node_id: "gate" })).toMatchObject({
      result: { ok: true },
    });
    seen.add("approve_node");
    expect((await f().drive(executor)).run.state).toBe("paused");
    // retry_node: a failed node runs again.
    expect(await control({ action: "retry_node", node_id: "b" })).toMatchObject({ result: { ok: true } });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    expect(executor.callsOf("b")).toHaveLength(2);
    seen.add("retry_node");
    // stop_sessions: after the run reached a terminal state.
    const stopped: string[] = [];
    const stop = await controlPipelineRun(
      store,
      f().runId,
      { action: "stop_sessions" },
      {
        owner: "cli",
        stopSessions: async (id) => {
          stopped.push(id);
        },
      },
    );
    expect(stop.result).toEqual({ ok: true });
    expect(stopped).toEqual([f().runId]);
    seen.add("stop_sessions");
    // skip_node with a note, and cancel, on the second run.
    const second = (command: Parameters<typeof controlPipelineRun>[2]) =>
      controlPipelineRun(store, started.run_id, command, { owner: "cli" });
    expect(await second({ action: "skip_node", node_id: "a", note: "done already" })).toMatchObject({
      result: { ok: true },
    });
    expect((await store.getRunNodes(started.run_id))[0]).toMatchObject({
      state: "succeeded",
      handoff: { summary: "done already", skipped: true },
    });
    seen.add("skip_node");
    expect(await second({ action: "cancel" })).toMatchObject({
      result: { ok: true },
      run: { state: "canceled" },
    });
    seen.add("cancel");
    // Every row of the reference's table.
    expect([...seen].sort()).toEqual(
      [
        "list_definitions",
        "list_runs",
        "inspect",
        "start",
        "pause / resume",
        "cancel",
        "approve_node",
        "retry_node",
        "skip_node",
        "stop_sessions",
      ].sort(),
    );
  });
});

describe("failure policies with a fan-out and a join", () => {
  // a → (b, c) → j; x → y independent. b fails at once; x and y take a while.
  const definition = {
    name: "Fan",
    nodes: [
      node("a"),
      node("b", ["a"]),
      node("c", ["a"]),
      node("j", ["b", "c"]),
      node("x"),
      node("y", ["x"]),
    ],
  };
  const script = () =>
    new ScriptedExecutor({
      b: { outcomes: [{ status: "failed", code: "boom" }, { status: "succeeded" }] },
      c: { delayMs: 40 },
      x: { delayMs: 80 },
      y: { delayMs: 10 },
    });

  it.each([
    {
      policy: "pause" as const,
      run: "paused",
      stop: "paused",
      states: { a: "succeeded", b: "failed", c: "succeeded", j: "pending", x: "succeeded", y: "pending" },
    },
    {
      policy: "fail_fast" as const,
      run: "failed",
      stop: "converged",
      states: { a: "succeeded", b: "failed", c: "succeeded", j: "canceled", x: "succeeded", y: "canceled" },
    },
    {
      policy: "continue" as const,
      run: "failed",
      stop: "converged",
      states: { a: "succeeded", b: "failed", c: "succeeded", j: "canceled", x: "succeeded", y: "succeeded" },
    },
  ])("$policy", async ({ policy, run, stop, states }) => {
    fx = await runFixture(definition, { failure_policy: policy });
    const executor = script();
    const result = await f().drive(executor);
    expect(result.stop).toBe(stop);
    expect(result.run.state).toBe(run);
    expect(await f().states()).toEqual(states);
    expect(executor.callsOf("j")).toHaveLength(0);
    expectLegalNodeEvents(await f().store.listEvents(f().runId));

    // Retrying the failed node finishes the run whatever the policy: canceled nodes come back.
    const { result: retried, needsDriver } = await control({ action: "retry_node", node_id: "b" });
    expect(retried).toEqual({ ok: true });
    expect(needsDriver).toBe(true);
    const again = await f().drive(executor);
    expect(again.run.state).toBe("succeeded");
    expect(executor.callsOf("b")).toHaveLength(2);
    for (const id of ["a", "c", "x"]) expect(executor.callsOf(id)).toHaveLength(1);
    expect(executor.callsOf("j")).toHaveLength(1);
  });

  it("resume is refused while a pause-policy failure stands, saying what continues the run", async () => {
    fx = await runFixture({ name: "Resume", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    expect((await f().drive(executor)).run.state).toBe("paused");
    const { result, run } = await control({ action: "resume" });
    expect(result).toEqual({
      ok: false,
      code: "pipeline_action_not_allowed",
      message: expect.stringContaining('node "a" is failed under the failure policy pause'),
    });
    if (!result.ok) expect(result.message).toContain("retry_node or skip_node it, or cancel the run");
    expect(run.state).toBe("paused");
    // Refused, so nothing changed but the refusal's event: no paused → running → paused.
    const events = (await f().store.listEvents(f().runId)).map((e) => e.event);
    expect(events.at(-1)).toMatchObject({ type: "command_refused", command: { action: "resume" } });
    expect(events.filter((e) => e.type === "run_state" && e.to === "running")).toHaveLength(1);
    // A pause without a failure resumes as before; the retry continues the run.
    expect(await control({ action: "retry_node", node_id: "a" })).toMatchObject({ result: { ok: true } });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
  });

  it.each([
    { policy: "fail_fast" as const, canceled: "y" },
    { policy: "continue" as const, canceled: "j" },
  ])(
    "$policy: retrying a node the policy canceled is refused while its cause stands",
    async ({ policy, canceled }) => {
      fx = await runFixture(definition, { failure_policy: policy });
      const executor = script();
      expect((await f().drive(executor)).run.state).toBe("failed");
      expect((await f().states())[canceled]).toBe("canceled");
      const before = (await f().store.listEvents(f().runId)).length;
      const { result } = await control({ action: "retry_node", node_id: canceled });
      expect(result).toEqual({
        ok: false,
        code: "pipeline_action_not_allowed",
        message: expect.stringContaining(
          `node "${canceled}" while the failure policy ${policy} keeps it canceled: node "b" is failed`,
        ),
      });
      if (!result.ok) expect(result.message).toContain(`retry_node or skip_node "b" first`);
      // No pending → canceled bounce: only the refusal was recorded.
      const after = (await f().store.listEvents(f().runId)).slice(before).map((e) => e.event.type);
      expect(after).toEqual(["command_refused"]);
      expect(await control({ action: "retry_node", node_id: "b" })).toMatchObject({ result: { ok: true } });
      expect((await f().drive(executor)).run.state).toBe("succeeded");
      expect(executor.callsOf(canceled)).toHaveLength(1);
    },
  );

  it("pause with two failures: retrying one runs it (and what it unblocks) while the other still stands", async () => {
    fx = await runFixture({
      name: "TwoPause",
      nodes: [node("p"), node("q"), node("p2", ["p"]), node("j", ["p2", "q"])],
    });
    const twice = [{ status: "failed" as const }, { status: "succeeded" as const }];
    const executor = new ScriptedExecutor({ p: { outcomes: twice }, q: { outcomes: twice } });
    expect((await f().drive(executor)).run.state).toBe("paused");
    expect(await f().states()).toEqual({ p: "failed", q: "failed", p2: "pending", j: "pending" });
    const pausesBefore = (await f().store.listEvents(f().runId)).filter(
      (e) => e.event.type === "run_state" && e.event.to === "paused",
    ).length;
    expect(await control({ action: "retry_node", node_id: "p" })).toMatchObject({ result: { ok: true } });
    // p and p2 run although q is still failed; then nothing else can advance: the run waits again.
    const second = await f().drive(executor);
    expect(second.run.state).toBe("paused");
    expect(await f().states()).toEqual({ p: "succeeded", q: "failed", p2: "succeeded", j: "pending" });
    const pauses = (await f().store.listEvents(f().runId)).filter(
      (e) => e.event.type === "run_state" && e.event.to === "paused",
    );
    expect(pauses).toHaveLength(pausesBefore + 1);
    expect(pauses.at(-1)!.event).toMatchObject({ reason: expect.stringContaining('"q" is failed') });
    expect(await control({ action: "retry_node", node_id: "q" })).toMatchObject({ result: { ok: true } });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    expect(executor.callsOf("p")).toHaveLength(2);
    expect(executor.callsOf("p2")).toHaveLength(1);
    expect(executor.callsOf("j")).toHaveLength(1);
  });

  it("pause: a failure recorded by a driver that died before pausing pauses the next driver's run", async () => {
    fx = await runFixture({ name: "DiedBeforePause", nodes: [node("a"), node("b")] });
    const { store, runId } = f();
    await store.acquireLease(runId, "dead", 50);
    await store.updateRun(runId, "dead", {
      run: { state: "running" },
      nodes: { a: { state: "failed", attempts: 1, error: { code: "x", message: "boom" } } },
      events: [
        { type: "run_state", from: "pending", to: "running", reason: "driver started" },
        { type: "node_state", node_id: "a", from: "pending", to: "failed", reason: "attempt failed" },
      ],
    });
    await sleep(60);
    const executor = new ScriptedExecutor();
    expect((await f().drive(executor)).run.state).toBe("paused");
    expect(executor.calls).toHaveLength(0);
  });

  it("fail_fast with two failures: the run stays failed until the last is retried, then both run", async () => {
    fx = await runFixture(
      { name: "Two", nodes: [node("p"), node("q"), node("j", ["p", "q"])] },
      { failure_policy: "fail_fast" },
    );
    const twice = [{ status: "failed" as const }, { status: "succeeded" as const }];
    const executor = new ScriptedExecutor({ p: { outcomes: twice }, q: { outcomes: twice } });
    expect((await f().drive(executor)).run.state).toBe("failed");
    expect(await f().states()).toEqual({ p: "failed", q: "failed", j: "canceled" });
    const before = (await f().store.listEvents(f().runId)).length;
    const first = await control({ action: "retry_node", node_id: "p" });
    expect(first).toMatchObject({ result: { ok: true }, run: { state: "failed" }, needsDriver: false });
    expect(await f().states()).toEqual({ p: "pending", q: "failed", j: "canceled" });
    // No failed → running → failed bounce, and no pending → canceled one.
    const types = (await f().store.listEvents(f().runId)).slice(before).map((e) => e.event);
    expect(types.filter((e) => e.type === "run_state")).toEqual([]);
    expect(await control({ action: "retry_node", node_id: "q" })).toMatchObject({
      result: { ok: true },
      run: { state: "running" },
      needsDriver: true,
    });
    expect(await f().states()).toEqual({ p: "pending", q: "pending", j: "pending" });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    for (const id of ["p", "q", "j"]) expect(executor.callsOf(id)).toHaveLength(id === "j" ? 1 : 2);
    expectLegalNodeEvents(await f().store.listEvents(f().runId));
  });

  it("fail_fast: skipping one of two failures keeps the run failed; skipping the other reopens it", async () => {
    fx = await runFixture(
      { name: "TwoSkip", nodes: [node("p"), node("q"), node("j", ["p", "q"])] },
      { failure_policy: "fail_fast" },
    );
    const executor = new ScriptedExecutor({
      p: { outcomes: [{ status: "failed" }] },
      q: { outcomes: [{ status: "failed" }] },
    });
    expect((await f().drive(executor)).run.state).toBe("failed");
    expect(await control({ action: "skip_node", node_id: "p", note: null })).toMatchObject({
      run: { state: "failed" },
    });
    expect(await control({ action: "skip_node", node_id: "q", note: null })).toMatchObject({
      run: { state: "running" },
    });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    expect(executor.callsOf("j")).toHaveLength(1);
  });

  it("continue: skipping the cause brings the canceled node below it back", async () => {
    fx = await runFixture(
      { name: "C", nodes: [node("a"), node("b", ["a"])] },
      { failure_policy: "continue" },
    );
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    expect((await f().drive(executor)).run.state).toBe("failed");
    expect(await control({ action: "skip_node", node_id: "a", note: null })).toMatchObject({
      result: { ok: true },
    });
    expect((await f().states()).b).toBe("pending");
    expect((await f().drive(executor)).run.state).toBe("succeeded");
  });

  it("reuse_session_of a node skipped before it ran: a new session, and the launch event says so", async () => {
    fx = await runFixture({
      name: "Reuse",
      nodes: [node("plan"), node("impl", ["plan"], { reuse_session_of: "plan" })],
    });
    const executor = new ScriptedExecutor();
    expect(await control({ action: "skip_node", node_id: "plan", note: "planned by hand" })).toMatchObject({
      result: { ok: true },
    });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    expect(executor.callsOf("impl")[0]!.reuseSession).toBeNull();
    const launch = (await f().store.listEvents(f().runId)).find(
      (e) => e.event.type === "node_state" && e.event.node_id === "impl" && e.event.to === "launching",
    )!.event;
    expect(launch).toMatchObject({
      reason: expect.stringContaining('launch in a new session: "plan" (reuse_session_of) left no session'),
    });
  });

  it("a blocked node counts as a failure (pause)", async () => {
    fx = await runFixture({ name: "Blocked", nodes: [node("a"), node("b", ["a"])] });
    const result = await f().drive(
      new ScriptedExecutor({ a: { outcomes: [{ status: "blocked", reason: "needs a key" }] } }),
    );
    expect(result.run.state).toBe("paused");
    expect(result.nodes[0]).toMatchObject({
      state: "blocked",
      error: { code: "pipeline_node_blocked", message: "needs a key" },
    });
    expect(
      JSON.parse(await readFile(join(f().runDir, "nodes", "a", "attempt-1", "error.json"), "utf8")),
    ).toMatchObject({
      status: "blocked",
      reason: "needs a key",
    });
  });

  it("retry of a node whose downstream was skipped runs the node, not the skipped downstream", async () => {
    fx = await runFixture({
      name: "Skip",
      nodes: [
        node("a"),
        node("b", ["a"], { prompt_template: "{{upstream.a.summary}}" }),
        node("c", ["b"], { prompt_template: "C {{upstream.b.summary}}" }),
      ],
    });
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    expect((await f().drive(executor)).run.state).toBe("paused");
    expect(await control({ action: "skip_node", node_id: "b", note: "done by hand" })).toMatchObject({
      result: { ok: true },
    });
    expect(await control({ action: "retry_node", node_id: "a" })).toMatchObject({
      result: { ok: true },
      needsDriver: true,
    });
    const result = await f().drive(executor);
    expect(result.run.state).toBe("succeeded");
    expect(executor.callsOf("a")).toHaveLength(2);
    expect(executor.callsOf("b")).toHaveLength(0);
    expect(executor.callsOf("c")[0]!.prompt).toBe("C done by hand");
    expect(result.nodes[1]).toMatchObject({
      state: "succeeded",
      handoff: { summary: "done by hand", skipped: true },
    });
  });
});

describe("control while a driver runs (a second store handle on the same file)", () => {
  it("pause during a fan-out: running branches finish, the join does not launch until resume", async () => {
    fx = await runFixture({
      name: "Fan",
      nodes: [node("a"), ...["b1", "b2", "b3"].map((id) => node(id, ["a"])), node("j", ["b1", "b2", "b3"])],
    });
    const gated = { gated: true };
    const executor = new ScriptedExecutor({ b1: gated, b2: gated, b3: gated });
    const driving = f().drive(executor);
    await Promise.all(["b1", "b2", "b3"].map((id) => executor.started(id)));
    const other = f().openStore();
    const paused = await control({ action: "pause" }, other);
    expect(paused).toMatchObject({
      result: { ok: true },
      via: "driver",
      needsDriver: false,
      run: { state: "paused" },
    });
    for (const id of ["b1", "b2", "b3"]) executor.release(id);
    const result = await driving;
    expect(result.stop).toBe("paused");
    expect(await f().states()).toEqual({
      a: "succeeded",
      b1: "succeeded",
      b2: "succeeded",
      b3: "succeeded",
      j: "pending",
    });
    expect(executor.callsOf("j")).toHaveLength(0);
    expect(await control({ action: "pause" }, other)).toMatchObject({
      result: { ok: false, code: "pipeline_action_not_allowed" },
    });
    const resumed = await control({ action: "resume" }, other);
    expect(resumed).toMatchObject({ result: { ok: true }, via: "direct", needsDriver: true });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    expect(executor.callsOf("j")).toHaveLength(1);
  });

  it("cancel aborts running attempts; approve after cancel is refused", async () => {
    fx = await runFixture({
      name: "Gate",
      nodes: [node("a"), node("slow"), node("g", ["a"], { requires_approval: true })],
    });
    const executor = new ScriptedExecutor({ slow: { gated: true } });
    const driving = f().drive(executor);
    await executor.started("slow");
    const other = f().openStore();
    while ((await other.getRunNodes(f().runId)).find((n) => n.node_id === "g")!.state !== "waiting_approval")
      await sleep(5);
    // A refusal comes from the live driver too, through the same table.
    expect(await control({ action: "approve_node", node_id: "a" }, other)).toMatchObject({
      via: "driver",
      result: {
        ok: false,
        code: "pipeline_action_not_allowed",
        message: expect.stringContaining("while it is succeeded"),
      },
    });
    expect(await control({ action: "cancel" }, other)).toMatchObject({ result: { ok: true }, via: "driver" });
    const result = await driving;
    expect(result).toMatchObject({ stop: "converged", run: { state: "canceled" } });
    expect(await f().states()).toEqual({ a: "succeeded", slow: "canceled", g: "canceled" });
    expect((await f().store.listAttempts(f().runId, { node_id: "slow" }))[0]!.status).toBe("canceled");
    const approve = await control({ action: "approve_node", node_id: "g" }, other);
    expect(approve.result).toEqual({
      ok: false,
      code: "pipeline_action_not_allowed",
      message: expect.stringContaining("while the run is canceled"),
    });
    expect(executor.callsOf("g")).toHaveLength(0);
    // stop_sessions once the run is terminal.
    expect(
      await controlPipelineRun(
        other,
        f().runId,
        { action: "stop_sessions" },
        { owner: "cli", stopSessions: (id) => executor.stopSessions(id) },
      ),
    ).toMatchObject({ result: { ok: true } });
    expect(executor.stoppedSessions).toEqual([f().runId]);
  });
});

describe("control edge cases", () => {
  it("times out (pipeline_control_timeout) when the lease holder does not answer; the command stays queued", async () => {
    fx = await runFixture({ name: "Ghost", nodes: [node("a")] });
    await f().store.acquireLease(f().runId, "ghost", 60_000);
    await expect(
      controlPipelineRun(
        f().store,
        f().runId,
        { action: "pause" },
        { owner: "cli", timeoutMs: 80, pollIntervalMs: 10 },
      ),
    ).rejects.toMatchObject({ code: "pipeline_control_timeout", message: expect.stringContaining("ghost") });
    expect((await f().store.listCommands(f().runId)).map((c) => c.state)).toEqual(["queued"]);
  });

  it("a command applied by a driver that died before completing it is answered as applied, not applied twice", async () => {
    fx = await runFixture({ name: "Twice", nodes: [node("a")] });
    const { store, runId } = f();
    const sent = await store.enqueueCommand(runId, { action: "pause" });
    await store.acquireLease(runId, "dead", 50);
    const [taken] = await store.takeCommands(runId, "dead");
    await store.updateRun(runId, "dead", {
      run: { state: "paused" },
      events: [
        { type: "run_state", from: "pending", to: "paused", reason: "pause" },
        { type: "command_applied", command_id: taken!.command_id, command: taken!.command },
      ],
    });
    await sleep(60);
    const result = await f().drive(new ScriptedExecutor());
    expect(result).toMatchObject({ stop: "paused", run: { state: "paused" } });
    expect(await store.getCommand(runId, sent.command_id)).toMatchObject({
      state: "done",
      result: { ok: true },
    });
    const events = (await store.listEvents(runId)).map((e) => e.event.type);
    expect(events.filter((t) => t === "command_applied")).toHaveLength(1);
    expect(events).not.toContain("command_refused");
  });
});

describe("applying commands reads the run's events once, not once per command", () => {
  it("a refusal recorded by a dead driver is answered again as refused by controlPipelineRun", async () => {
    fx = await runFixture({ name: "Again", nodes: [node("a")] });
    const { store, runId } = f();
    const sent = await store.enqueueCommand(runId, { action: "resume" });
    await store.acquireLease(runId, "dead", 50);
    const [taken] = await store.takeCommands(runId, "dead");
    await store.appendEvents(runId, "dead", [
      {
        type: "command_refused",
        command_id: taken!.command_id,
        command: taken!.command,
        code: "pipeline_action_not_allowed",
        message: "resume is not allowed while the run is pending",
      },
    ]);
    await sleep(60);
    // The next action takes the lease (the dead driver's is expired): the queued resume is answered as before.
    await control({ action: "pause" });
    expect(await store.getCommand(runId, sent.command_id)).toMatchObject({
      state: "done",
      result: { ok: false, code: "pipeline_action_not_allowed" },
    });
    const events = (await store.listEvents(runId)).map((e) => e.event.type);
    expect(events.filter((t) => t === "command_refused")).toHaveLength(1);
  });

  it("a driver taking many commands reads the whole event log only when it starts", async () => {
    fx = await runFixture({ name: "Many", nodes: [node("a"), node("b", ["a"])] });
    let fullReads = 0;
    const counted = new Proxy(f().store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== "listEvents" || typeof value !== "function") return value;
        return (runId: string, filter?: { fromSeq?: number }) => {
          // A read of the whole log names no fromSeq (the mirror reads from its last seq on).
          if (filter?.fromSeq === undefined) fullReads += 1;
          return value.call(target, runId, filter);
        };
      },
    });
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const driving = f().drive(executor, { store: counted });
    await executor.started("a");
    const other = f().openStore();
    for (let i = 0; i < 4; i += 1) {
      expect((await control({ action: "pause" }, other)).result).toEqual({ ok: true });
      expect((await control({ action: "resume" }, other)).result).toEqual({ ok: true });
    }
    executor.release("a");
    expect((await driving).run.state).toBe("succeeded");
    expect(fullReads).toBe(1);
  });
});

describe("approval gates are never passed without an approval", () => {
  it("not by a new driver, a retry of the upstream, nor a retry of the gate itself", async () => {
    fx = await runFixture({
      name: "Gate",
      nodes: [node("a"), node("g", ["a"], { requires_approval: true })],
    });
    const executor = new ScriptedExecutor({
      a: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
      g: { outcomes: [{ status: "failed" }, { status: "succeeded" }] },
    });
    /** Drives until g waits at its gate, then stops the driver with its signal. */
    const driveToGate = async () => {
      const stop = new AbortController();
      const result = await f().drive(executor, {
        signal: stop.signal,
        onEvent: ({ event }) => {
          if (event.type === "node_state" && event.node_id === "g" && event.to === "waiting_approval")
            stop.abort();
        },
      });
      return result;
    };
    expect((await f().drive(executor)).run.state).toBe("paused"); // a failed
    await control({ action: "retry_node", node_id: "a" });
    expect((await driveToGate()).stop).toBe("stopped");
    expect(await f().states()).toEqual({ a: "succeeded", g: "waiting_approval" });
    // Pause and resume: the gate still waits.
    expect(await control({ action: "pause" })).toMatchObject({
      result: { ok: true },
      run: { state: "paused" },
    });
    expect(await control({ action: "resume" })).toMatchObject({ result: { ok: true }, needsDriver: true });
    expect((await f().drive(executor, { stopAtGates: true })).stop).toBe("waiting_approval");
    expect(executor.callsOf("g")).toHaveLength(0);
    // A new driver: the gate still waits.
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 60);
    expect((await f().drive(executor, { signal: stop.signal })).stop).toBe("stopped");
    expect(executor.callsOf("g")).toHaveLength(0);

    expect(await control({ action: "approve_node", node_id: "g" })).toMatchObject({
      result: { ok: true },
      needsDriver: true,
    });
    expect((await f().drive(executor)).run.state).toBe("paused"); // g's first attempt failed
    expect(executor.callsOf("g")).toHaveLength(1);
    await control({ action: "retry_node", node_id: "g" });
    expect((await driveToGate()).stop).toBe("stopped");
    expect(executor.callsOf("g")).toHaveLength(1); // the approval was for one launch
    await control({ action: "approve_node", node_id: "g" });
    expect((await f().drive(executor)).run.state).toBe("succeeded");
    expect(executor.callsOf("g")).toHaveLength(2);
    const events = await f().store.listEvents(f().runId);
    expectLegalNodeEvents(events);
    // Every launch of g came after an approval that no later launch reused.
    let approvals = 0;
    for (const { event } of events) {
      if (event.type === "command_applied" && event.command.action === "approve_node") approvals++;
      if (event.type === "attempt_started" && event.node_id === "g") approvals--;
      expect(approvals).toBeGreaterThanOrEqual(0);
    }
  });
});

describe("stopAtGates", () => {
  it("returns once only approval gates are left, and an approval then needs a driver", async () => {
    fx = await runFixture({
      name: "Gates",
      nodes: [node("a"), node("side"), node("g", ["a"], { requires_approval: true }), node("after", ["g"])],
    });
    const executor = new ScriptedExecutor({ side: { delayMs: 30 } });
    const result = await f().drive(executor, { stopAtGates: true });
    expect(result).toMatchObject({ stop: "waiting_approval", run: { state: "running" } });
    expect(await f().states()).toEqual({
      a: "succeeded",
      side: "succeeded",
      g: "waiting_approval",
      after: "pending",
    });
    expect(await f().store.getLease(f().runId)).toBeNull();
    expect(await control({ action: "approve_node", node_id: "g" })).toMatchObject({
      result: { ok: true },
      needsDriver: true,
    });
    expect((await f().drive(executor, { stopAtGates: true })).run.state).toBe("succeeded");
    expect(executor.callsOf("g")).toHaveLength(1);
  });
});

describe("crash resume and leases", () => {
  it("resume after a kill: no finished node runs twice, interrupted nodes get a new attempt", async () => {
    // 20 nodes in 5 layers of 4; each node depends on the whole layer before it.
    const nodes = Array.from({ length: 20 }, (_, i) => {
      const layer = Math.floor(i / 4);
      return node(`n${i}`, layer === 0 ? [] : [0, 1, 2, 3].map((k) => `n${(layer - 1) * 4 + k}`));
    });
    fx = await runFixture({ name: "Layers", nodes });
    const first = f().openStore();
    const executor1 = new ScriptedExecutor({}, { delayMs: 20 });
    // A lease long enough that a loaded machine still meets it live after the kill, then waits it out.
    const driving = f().drive(executor1, { store: first, leaseTtlMs: 3000, owner: "driver-1" });
    await executor1.started("n9");
    // The "kill": the driver's store goes away under it; it can write nothing more, and releases nothing.
    await first.close();
    await expect(driving).rejects.toMatchObject({ code: "pipeline_store_failed" });
    const atKill = await f().store.getRunNodes(f().runId);
    const finished = atKill.filter((n) => n.state === "succeeded").map((n) => n.node_id);
    const interrupted = atKill
      .filter((n) => n.state === "launching" || n.state === "running")
      .map((n) => n.node_id);
    expect(finished.length).toBeGreaterThanOrEqual(8);
    expect(interrupted.length).toBeGreaterThan(0);
    expect(await f().store.getLease(f().runId)).toMatchObject({ owner: "driver-1" });

    const executor2 = new ScriptedExecutor({}, { delayMs: 5 });
    expect((await f().drive(executor2, { owner: "driver-2" })).stop).toBe("lease_held");
    const held = await f().store.getLease(f().runId);
    await sleep(Math.max(0, Date.parse(held!.expires_at) - Date.now()) + 50);
    const result = await f().drive(executor2, { owner: "driver-2" });
    expect(result.run.state).toBe("succeeded");
    for (const id of finished) expect(executor2.callsOf(id), id).toHaveLength(0);
    for (const n of result.nodes) {
      const first = executor1.callsOf(n.node_id).length;
      const calls = first + executor2.callsOf(n.node_id).length;
      if (interrupted.includes(n.node_id)) {
        // Counted when it went launching; the kill may have come before the executor was called.
        expect(n.attempts, n.node_id).toBe(2);
        expect(first, n.node_id).toBeLessThanOrEqual(1);
      } else expect([calls, n.attempts], n.node_id).toEqual([1, 1]);
    }
    for (const id of interrupted) {
      const attempts = await f().store.listAttempts(f().runId, { node_id: id });
      expect(attempts.map((a) => a.status)).toEqual(["interrupted", "succeeded"]);
      expect(executor2.callsOf(id)[0]!.attempt).toBe(2);
    }
    const started = (await f().store.listEvents(f().runId)).filter((e) => e.event.type === "driver_started");
    expect(started.map((e) => e.event)).toEqual([
      { type: "driver_started", owner: "driver-1", generation: 1, took_over: false },
      { type: "driver_started", owner: "driver-2", generation: 2, took_over: true },
    ]);
    // The mirror on disk is whole again.
    const lines = (await readFile(join(f().runDir, "events.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual(await f().store.listEvents(f().runId));
  });

  it("a paused run stays paused under a new driver", async () => {
    fx = await runFixture({ name: "P", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({ a: { outcomes: [{ status: "failed" }] } });
    expect((await f().drive(executor)).stop).toBe("paused");
    expect((await f().drive(executor)).stop).toBe("paused");
    expect(executor.calls).toHaveLength(1);
  });

  it("a stopped driver leaves its running attempts to the next one", async () => {
    fx = await runFixture({ name: "S", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const stop = new AbortController();
    const driving = f().drive(executor, { signal: stop.signal });
    await executor.started("a");
    stop.abort();
    expect((await driving).stop).toBe("stopped");
    expect(await f().states()).toEqual({ a: "ready", b: "pending" });
    expect(await f().store.getLease(f().runId)).toBeNull();
    executor.release("a");
    const result = await f().drive(executor);
    expect(result.run.state).toBe("succeeded");
    expect(result.nodes[0]!.attempts).toBe(2);
    expect((await f().store.listAttempts(f().runId, { node_id: "a" })).map((a) => a.status)).toEqual([
      "interrupted",
      "succeeded",
    ]);
  });

  it("a driver whose lease is taken over stops without writing", async () => {
    fx = await runFixture({ name: "L", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const driving = f().drive(executor, { leaseTtlMs: 60_000 });
    await executor.started("a");
    // Another process whose clock is an hour ahead sees the lease expired and takes it over.
    const ahead = openSqlitePipelineStore({ chrysHome: f().chrysHome, now: () => Date.now() + 3_600_000 });
    expect(await ahead.acquireLease(f().runId, "usurper", 60_000)).toMatchObject({
      ok: true,
      took_over: true,
    });
    const before = (await f().store.listEvents(f().runId)).length;
    executor.release("a");
    const result = await driving;
    expect(result.stop).toBe("lease_lost");
    expect((await f().store.listEvents(f().runId)).length).toBe(before);
    await ahead.close();
  });
});

describe("a record that cannot be written reaches the caller on every path", () => {
  /** A file where the attempts' folder `nodes/` goes: events.jsonl works, every attempt file fails. */
  const blockNodesFolder = async () => {
    await mkdir(f().runDir, { recursive: true });
    await writeFile(join(f().runDir, "nodes"), "not a folder");
  };
  const rejection = async (driving: Promise<unknown>) => {
    const error = await driving.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "pipeline_records_failed" });
    return error as Error & { code: string; hint?: string; cause?: unknown };
  };

  it("converged: the run is finished in the store, the lease released, the error says so", async () => {
    fx = await runFixture({ name: "R", nodes: [node("a"), node("b", ["a"])] });
    await blockNodesFolder();
    const error = await rejection(f().drive(new ScriptedExecutor()));
    expect(error.message).toContain(f().runDir);
    expect(error.message).toContain("prompt.md");
    expect(error.message).toContain("ended converged with the run succeeded");
    expect(error.hint).toContain("icode pipeline inspect");
    expect((await f().store.getRun(f().runId)).state).toBe("succeeded");
    expect(await f().store.getLease(f().runId)).toBeNull();
    // The event log kept going after the first failure.
    const lines = (await readFile(join(f().runDir, "events.jsonl"), "utf8")).trim().split("\n");
    expect(lines).toHaveLength((await f().store.listEvents(f().runId)).length);
  });

  it("lease lost: reported, not swallowed", async () => {
    fx = await runFixture({ name: "L", nodes: [node("a"), node("b", ["a"])] });
    await blockNodesFolder();
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const driving = f().drive(executor, { leaseTtlMs: 60_000 });
    await executor.started("a");
    const ahead = openSqlitePipelineStore({ chrysHome: f().chrysHome, now: () => Date.now() + 3_600_000 });
    expect(await ahead.acquireLease(f().runId, "usurper", 60_000)).toMatchObject({ ok: true });
    executor.release("a");
    const error = await rejection(driving);
    expect(error.message).toContain("ended lease_lost");
    await ahead.close();
  });

  it("after another error: both are said, the other error is the cause", async () => {
    fx = await runFixture({ name: "E", nodes: [node("a"), node("b", ["a"])] });
    await blockNodesFolder();
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const driving = f().drive(executor);
    await executor.started("a");
    await f().store.close();
    executor.release("a");
    const error = await rejection(driving);
    expect(error.message).toContain("prompt.md");
    expect(error.message).toContain("the driver had failed before: pipeline_store_failed");
    expect(error.cause).toMatchObject({ code: "pipeline_store_failed" });
  });

  it("a store error alone stays that error", async () => {
    fx = await runFixture({ name: "S", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const driving = f().drive(executor);
    await executor.started("a");
    await f().store.close();
    executor.release("a");
    await expect(driving).rejects.toMatchObject({ code: "pipeline_store_failed" });
  });

  it("a run folder that cannot be made fails before anything launches", async () => {
    fx = await runFixture({ name: "F", nodes: [node("a")] });
    await mkdir(dirname(f().runDir), { recursive: true });
    await writeFile(f().runDir, "a file, not the run's folder");
    const executor = new ScriptedExecutor();
    const error = await rejection(f().drive(executor));
    expect(error.message).toContain("events.jsonl");
    expect(executor.calls).toHaveLength(0);
    // The run is left to the next driver at once, not when the lease expires.
    expect(await f().store.getLease(f().runId)).toBeNull();
  });
});

describe("auto_supervise", () => {
  const transient = { status: "failed" as const, code: "rate_limited", transient: true };

  it("the default supervisor retries a transient failure once, and records its decision", async () => {
    fx = await runFixture({ name: "T", nodes: [node("a"), node("b")] });
    const executor = new ScriptedExecutor({
      a: { outcomes: [transient, { status: "succeeded" }] },
      b: { outcomes: [transient, transient, { status: "succeeded" }] },
    });
    const result = await f().drive(executor);
    expect(result.run.state).toBe("paused"); // b failed twice: retried once, then left to the pause policy
    expect(executor.callsOf("a")).toHaveLength(2);
    expect(executor.callsOf("b")).toHaveLength(2);
    const decisions = (await f().store.listEvents(f().runId)).flatMap((e) =>
      e.event.type === "supervisor_decision"
        ? [[e.event.node_id, e.event.decision.action, e.event.budget_left]]
        : [],
    );
    expect(decisions).toEqual([
      ["a", "retry", 2],
      ["b", "retry", 1],
      ["b", "leave", 0],
    ]);
  });

  it("auto_supervise: false applies the policy at once", async () => {
    fx = await runFixture({ name: "T", auto_supervise: false, nodes: [node("a")] });
    const executor = new ScriptedExecutor({ a: { outcomes: [transient, { status: "succeeded" }] } });
    expect((await f().drive(executor)).run.state).toBe("paused");
    expect(executor.callsOf("a")).toHaveLength(1);
    const types = (await f().store.listEvents(f().runId)).map((e) => e.event.type);
    expect(types).not.toContain("supervisor_decision");
    expect(types).not.toContain("supervision");
  });

  it("a plugged-in supervisor can skip; the budget bounds it; supervision turns off at convergence", async () => {
    fx = await runFixture(
      { name: "T", nodes: ["a", "b", "c"].map((id) => node(id)) },
      { failure_policy: "continue" },
    );
    const asked: string[] = [];
    const supervisor: Supervisor = {
      decide: ({ node: n, budgetLeft }) => {
        asked.push(`${n.node_id}:${budgetLeft}`);
        return { action: "skip", note: `skipped ${n.node_id}`, reason: "not essential" };
      },
    };
    const executor = new ScriptedExecutor(
      Object.fromEntries(["a", "b", "c"].map((id) => [id, { outcomes: [{ status: "failed" as const }] }])),
      {},
    );
    const result = await f().drive(executor, {
      supervisor,
      supervisionBudget: 2,
      limits: { maxParallel: 1 },
    });
    expect(asked).toEqual(["a:2", "b:1"]);
    expect(await f().states()).toEqual({ a: "succeeded", b: "succeeded", c: "failed" });
    expect(result.run.state).toBe("failed");
    const supervision = (await f().store.listEvents(f().runId)).flatMap((e) =>
      e.event.type === "supervision" ? [e.event.on] : [],
    );
    expect(supervision).toEqual([true, false]);
  });
});
