import { describe, expect, it } from "vitest";
import { PendingCall } from "./call";
import type { CallError } from "./protocol";
import { SignalWatch } from "./signal-watch";

function pendingCall(id: number, signal: AbortSignal, startedAt = performance.now()): PendingCall {
  return new PendingCall(
    id,
    "node",
    () => {},
    () => {},
    { signal },
    startedAt,
    null,
    0,
  );
}

/** Resolves after `ms`; timers fire in order of their due time, so a shorter one set before has fired. */
const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("SignalWatch", () => {
  it("cancels a young call whose signal aborted at its next poll, without listening to the signal", async () => {
    const cancelled: [number, CallError["code"]][] = [];
    const watch = new SignalWatch((call, error) => {
      call.done = true;
      cancelled.push([call.id, error.code]);
    });
    const controller = new AbortController();
    watch.add(pendingCall(1, controller.signal));
    controller.abort();
    expect(cancelled).toEqual([]); // polled, not listened to
    await after(20);
    expect(cancelled).toEqual([[1, "cancelled"]]);
    watch.stop();
  });

  it("listens to the signal of a call older than 50 ms: an abort cancels it at once", async () => {
    const cancelled: number[] = [];
    const watch = new SignalWatch((call) => {
      call.done = true;
      cancelled.push(call.id);
    });
    const controller = new AbortController();
    const old = performance.now() - 1_000;
    watch.add(pendingCall(1, controller.signal, old));
    watch.add(pendingCall(2, controller.signal, old)); // two calls, one signal
    await after(20); // polled once: both get the signal's one listener
    controller.abort();
    expect(cancelled).toEqual([1, 2]);
    watch.stop();
  });

  it("forgets a call released before its signal aborts", async () => {
    const cancelled: number[] = [];
    const watch = new SignalWatch((call) => cancelled.push(call.id));
    const controller = new AbortController();
    const call = pendingCall(1, controller.signal, performance.now() - 1_000);
    watch.add(call);
    await after(20);
    call.done = true;
    watch.release(call);
    controller.abort();
    expect(cancelled).toEqual([]);
    watch.stop();
  });
});
