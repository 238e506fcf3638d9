import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../engine-events";
import { buildRun } from "./trajectory";

/** An event before it is numbered (`Omit` applied to each member of the union). */
type Unsequenced = EngineEvent extends infer E ? (E extends unknown ? Omit<E, "seq"> : never) : never;

const R = "f".repeat(32);
const at = (node_id: string, iteration: number, loop_id: string | null) => ({
  run_id: R,
  node_id,
  activation_id: `${node_id}@iter#${iteration}`,
  iteration,
  loop_id,
});

function stream(): EngineEvent[] {
  const v = { text: "", data: null };
  const list: Unsequenced[] = [
    {
      type: "workflow_run_start",
      run_id: R,
      ts: 0,
      title: "t",
      start: "L",
      input: v,
      policy: "fail",
      deadline: 50,
      node_count: 2,
      edge_count: 0,
      outputs: [],
    },
    { ...at("L", 1, null), type: "node_started", ts: 1, kind: "loop", input: v, sources: [] },
    { ...at("x", 1, "L"), type: "node_started", ts: 2, kind: "agent", input: v, sources: [] },
    { ...at("x", 1, "L"), type: "attempt_started", ts: 2, attempt: 1, max_attempts: 3, timeout_ms: null },
    { ...at("x", 1, "L"), type: "node_completed", ts: 10, kind: "agent", attempt: 1, value: v },
    { ...at("x", 2, "L"), type: "node_started", ts: 11, kind: "agent", input: v, sources: [] },
    { ...at("x", 2, "L"), type: "attempt_started", ts: 11, attempt: 1, max_attempts: 3, timeout_ms: null },
    {
      type: "workflow_run_end",
      run_id: R,
      ts: 50,
      outcome: "cancelled",
      reason: "deadline_exceeded",
      node_id: "",
      error: "",
      activation_id: null,
      error_class: null,
      outputs: [],
    },
  ];
  return list.map((e, seq) => ({ ...e, seq }) as EngineEvent);
}

describe("buildRun", () => {
  it("keeps loop iterations apart and cuts open attempts and activations at the run's end", () => {
    const run = buildRun(R, "2024-01-01T00:00:00.000Z", stream());
    expect(run).toMatchObject({
      outcome: "cancelled",
      reason: "deadline_exceeded",
      start_ms: 0,
      end_ms: 50,
      duration_ms: 50,
    });
    expect(
      run.nodes.map((n) => [n.activation_id, n.kind, n.loop_id, n.status, n.start_ms, n.end_ms]),
    ).toEqual([
      ["L@iter#1", "loop", null, "cancelled", 1, 50],
      ["x@iter#1", "agent", "L", "completed", 2, 10],
      ["x@iter#2", "agent", "L", "cancelled", 11, 50],
    ]);
    expect(run.nodes[2]?.attempts).toEqual([
      {
        attempt: 1,
        status: "cancelled",
        error_class: null,
        error: null,
        start_ms: 11,
        end_ms: 50,
        duration_ms: 39,
        usage: null,
        tool_calls: [],
      },
    ]);
    expect(run.usage).toBeNull();
  });

  it("takes each attempt's last (cumulative) usage, sums it up, and lists the attempt's tool calls", () => {
    const usage = (input: number, output: number) => ({
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: { amount: input / 100, currency: "USD" },
    });
    const x1 = at("x", 1, "L");
    const x2 = at("x", 2, "L");
    const activity = (where: typeof x1, ts: number, a: Record<string, unknown>) =>
      ({ ...where, type: "agent_activity", ts, attempt: 1, activity: a }) as unknown as EngineEvent;
    const call = (status: string) => ({
      kind: "tool_call",
      tool_call_id: "t1",
      title: "read_file a.ts",
      tool_kind: "read",
      status,
      input: null,
      result: null,
    });
    const base = stream();
    const events = [
      ...base.slice(0, 4),
      activity(x1, 3, { kind: "usage", usage: usage(5, 1) }),
      activity(x1, 4, call("pending")),
      activity(x1, 6, call("completed")),
      activity(x1, 7, { kind: "usage", usage: usage(10, 5) }),
      ...base.slice(4, 7),
      activity(x2, 12, { kind: "usage", usage: usage(1, 2) }),
      ...base.slice(7),
    ].map((e, seq) => ({ ...e, seq }));
    const run = buildRun(R, "2024-01-01T00:00:00.000Z", events);
    expect(run.nodes[1]?.usage).toEqual(usage(10, 5));
    expect(run.nodes[1]?.attempts[0]?.tool_calls).toEqual([
      {
        tool_call_id: "t1",
        title: "read_file a.ts",
        tool_kind: "read",
        status: "completed",
        start_ms: 4,
        end_ms: 6,
        duration_ms: 2,
      },
    ]);
    expect(run.nodes[2]?.attempts[0]?.usage).toEqual(usage(1, 2));
    expect(run.usage).toEqual({
      input_tokens: 11,
      output_tokens: 7,
      total_tokens: 18,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: { amount: 0.11, currency: "USD" },
    });
    expect(run.nodes[0]?.usage).toBeNull();
  });
});
