import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { node, type RunFixture, runFixture } from "../../test/run-helpers";
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
    const driving = f().drive(executor1, { store: first, leaseTtlMs: 300, owner: "driver-1" });
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
    await sleep(350);
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
