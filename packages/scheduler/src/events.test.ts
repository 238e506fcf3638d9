import { EventEmitter } from "node:events";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ENGINE_EVENT_TYPES, type EngineEvent, type EngineEventMap, EngineEventSchema } from "./events";
import { def, edge, FakeFailure, flush, harness, join, loop, py, when } from "./testing";

describe("the event stream", () => {
  it("describes a small run completely, in order, with run_id, seq and clock timestamps", async () => {
    // a → b (when) ; a → c ; outputs b, c.   b takes 2 s.
    const h = harness(
      def({
        start: "a",
        outputs: ["b", "c"],
        nodes: [py("a"), py("b"), py("c")],
        edges: [when("a", "b"), edge("a", "c")],
      }),
      {
        nodes: {
          a: (_, ctx) => {
            ctx.io.emit("working");
            return { text: "A", data: { n: 1 } };
          },
          b: async (input, ctx) => {
            await ctx.sleep(2_000);
            return `B(${input.text})`;
          },
          c: () => "C",
        },
      },
      { input: { text: "hello", data: null } },
    );
    const result = await h.finish();
    const events = h.sink.events;
    const run = "0123456789abcdef0123456789abcdef";
    const strip = (e: EngineEvent) => {
      const { run_id, seq, ts, ...rest } = e;
      return rest;
    };
    expect(events.map((e) => e.run_id)).toEqual(events.map(() => run));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events.map(strip)).toEqual([
      {
        type: "workflow_run_start",
        title: "Test",
        start: "a",
        input: { text: "hello", data: null },
        policy: "fail",
        deadline: null,
        node_count: 3,
        edge_count: 2,
        outputs: ["b", "c"],
      },
      {
        type: "node_started",
        node_id: "a",
        activation_id: "a@iter#1",
        iteration: 1,
        loop_id: null,
        kind: "python",
        input: { text: "hello", data: null },
        sources: [],
      },
      {
        type: "attempt_started",
        node_id: "a",
        activation_id: "a@iter#1",
        iteration: 1,
        loop_id: null,
        attempt: 1,
        max_attempts: 1,
        timeout_ms: 300_000,
      },
      {
        type: "emit",
        node_id: "a",
        activation_id: "a@iter#1",
        iteration: 1,
        loop_id: null,
        attempt: 1,
        text: "working",
      },
      {
        type: "node_completed",
        node_id: "a",
        activation_id: "a@iter#1",
        iteration: 1,
        loop_id: null,
        kind: "python",
        attempt: 1,
        value: { text: "A", data: { n: 1 } },
      },
      {
        type: "edges_decided",
        node_id: "a",
        activation_id: "a@iter#1",
        iteration: 1,
        loop_id: null,
        passed: ["a->b"],
        blocked: [],
      },
      {
        type: "node_started",
        node_id: "b",
        activation_id: "b@iter#1",
        iteration: 1,
        loop_id: null,
        kind: "python",
        input: { text: "A", data: { n: 1 } },
        sources: ["a@iter#1"],
      },
      {
        type: "attempt_started",
        node_id: "b",
        activation_id: "b@iter#1",
        iteration: 1,
        loop_id: null,
        attempt: 1,
        max_attempts: 1,
        timeout_ms: 300_000,
      },
      {
        type: "node_started",
        node_id: "c",
        activation_id: "c@iter#1",
        iteration: 1,
        loop_id: null,
        kind: "python",
        input: { text: "A", data: { n: 1 } },
        sources: ["a@iter#1"],
      },
      {
        type: "attempt_started",
        node_id: "c",
        activation_id: "c@iter#1",
        iteration: 1,
        loop_id: null,
        attempt: 1,
        max_attempts: 1,
        timeout_ms: 300_000,
      },
      {
        type: "node_completed",
        node_id: "c",
        activation_id: "c@iter#1",
        iteration: 1,
        loop_id: null,
        kind: "python",
        attempt: 1,
        value: { text: "C", data: null },
      },
      {
        type: "node_completed",
        node_id: "b",
        activation_id: "b@iter#1",
        iteration: 1,
        loop_id: null,
        kind: "python",
        attempt: 1,
        value: { text: "B(A)", data: null },
      },
      {
        type: "workflow_run_end",
        outcome: "completed",
        reason: "",
        node_id: "",
        error: "",
        activation_id: null,
        error_class: null,
        outputs: [
          { node_id: "b", activation_id: "b@iter#1", text: "B(A)", data: null },
          { node_id: "c", activation_id: "c@iter#1", text: "C", data: null },
        ],
      },
    ]);
    // Timestamps come from the injected clock: b finished 2 s after it started.
    const bStart = events.find((e) => e.type === "attempt_started" && e.node_id === "b")!;
    const bDone = events.find((e) => e.type === "node_completed" && e.node_id === "b")!;
    expect(bStart.ts).toBe(1_000);
    expect(bDone.ts).toBe(3_000);
    // The run result is the end event's content.
    const { type, run_id, seq, ts, ...end } = events.at(-1) as Extract<
      EngineEvent,
      { type: "workflow_run_end" }
    >;
    expect(result).toEqual({ run_id, ...end });
  });

  it("is one discriminated union whose types a typed EventEmitter can carry", () => {
    expect(ENGINE_EVENT_TYPES).toContain("workflow_run_end");
    expect(new Set(ENGINE_EVENT_TYPES).size).toBe(ENGINE_EVENT_TYPES.length);
    const emitter = new EventEmitter<EngineEventMap>();
    const seen: string[] = [];
    emitter.on("node_failed", (event) => {
      expectTypeOf(event.error.class).toEqualTypeOf<string>();
      seen.push(event.activation_id);
    });
    const event = EngineEventSchema.parse({
      type: "node_failed",
      run_id: "r",
      seq: 3,
      ts: 0,
      node_id: "n",
      activation_id: "n@iter#1",
      iteration: 1,
      loop_id: null,
      kind: "python",
      attempt: 1,
      error: { class: "exception", message: "x", retryable: true, traceback: null },
      phase: "node",
    });
    if (event.type === "node_failed") emitter.emit(event.type, event);
    expect(seen).toEqual(["n@iter#1"]);
    expect(() => EngineEventSchema.parse({ type: "node_exploded", run_id: "r", seq: 0, ts: 0 })).toThrow();
  });

  it("builds every event with exactly its schema's keys, in code point order (canonical JSON as is)", async () => {
    // A loop, a join, conditional edges, an emit, a failed and retried attempt, a skip and a pause.
    const h = harness(
      def({
        start: "a",
        outputs: ["j"],
        nodes: [
          py("a", { retry: { max_attempts: 2, backoff: 1 } }),
          loop("L", "x", "x", { max_iterations: 2 }),
          py("x", { scope: "L" }),
          py("b"),
          join("j", ["L", "b"]),
          py("j"),
        ],
        edges: [
          edge("a", "L"),
          when("a", "b"),
          edge("L", "join:j"),
          edge("b", "join:j"),
          edge("join:j", "j"),
        ],
      }),
      {
        nodes: {
          a: (input, ctx) => {
            ctx.io.emit("trying");
            if (ctx.attempt === 1) throw new FakeFailure("exception", true);
            return input;
          },
          b: async (_, ctx) => {
            await ctx.sleep(60_000);
            return "late";
          },
        },
        until: { L: () => false },
      },
      { policy: "pause" },
    );
    await flush();
    h.clock.next(); // a's retry backoff
    await flush();
    h.run.pause();
    h.run.resume();
    expect(h.run.skipNode("b@iter#1", { note: "not needed" })).toEqual({ ok: true });
    await h.finish();
    const events = h.sink.events;
    const types = new Set(events.map((e) => e.type));
    for (const type of ["attempt_failed", "emit", "edges_decided", "loop_iteration", "loop_until"] as const) {
      expect(types).toContain(type);
    }
    expect(types).toContain("node_skipped");
    expect(types).toContain("workflow_run_paused");
    expect(types.size).toBeGreaterThanOrEqual(13);
    const schemas = new Map(EngineEventSchema.options.map((o) => [o.shape.type.value as string, o]));
    for (const event of events) {
      const keys = Object.keys(event);
      expect(keys).toEqual(Object.keys(schemas.get(event.type)!.shape).sort());
      expect(EngineEventSchema.parse(event)).toEqual(event);
    }
  });
});
