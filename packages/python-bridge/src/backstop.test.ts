import { describe, expect, it } from "vitest";
import { Backstop, backstopMs } from "./backstop";
import { PendingCall } from "./call";
import type { CallError } from "./protocol";

const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function pendingCall(id: number, backstopAt: number | null): PendingCall {
  return new PendingCall(
    id,
    "node",
    () => {},
    () => {},
    {},
    performance.now(),
    backstopAt,
    1_500,
  );
}

describe("Backstop", () => {
  it("settles overdue calls with timeout, leaves the others, and stops sweeping when none is left", async () => {
    const calls = new Map<number, PendingCall>();
    const settled: [number, CallError][] = [];
    const backstop = new Backstop(calls, (call, error) => {
      calls.delete(call.id);
      settled.push([call.id, error]);
    });
    calls.set(1, pendingCall(1, performance.now() - 1)); // overdue
    calls.set(2, pendingCall(2, null)); // no limit
    calls.set(3, pendingCall(3, performance.now() + 60_000)); // not yet
    backstop.arm();
    expect(backstop.armed).toBe(true);
    await after(250); // the 100 ms sweep has run
    expect(settled.map(([id]) => id)).toEqual([1]);
    expect(settled[0]![1]).toMatchObject({
      code: "timeout",
      phase: "node",
      message: expect.stringContaining("did not answer within 1.5 s: its event loop is blocked"),
    });
    expect([...calls.keys()]).toEqual([2, 3]);
    expect(backstop.armed).toBe(true); // call 3 still waits
    backstop.stop();
    expect(backstop.armed).toBe(false);
  });

  it("adds up a node's own limit and its conditions' limit", () => {
    const node = {
      kind: "node",
      node: "n",
      input: { text: "", data: null },
      conditions_timeout_ms: null,
    } as const;
    expect(backstopMs({ ...node, timeout_ms: null, conditions: null })).toBeNull();
    expect(backstopMs({ ...node, timeout_ms: 1_000, conditions: null })).toBe(1_000);
    expect(backstopMs({ ...node, timeout_ms: 1_000, conditions: { when: ["a->b"], switch: null } })).toBe(
      31_000,
    );
    expect(backstopMs({ kind: "until", loop: "l", input: { text: "", data: null }, timeout_ms: null })).toBe(
      30_000,
    );
  });
});
