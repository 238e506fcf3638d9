import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./virtual-clock";

describe("createVirtualClock", () => {
  it("fires timers in time order, ties in arming order, only when time moves", () => {
    const clock = createVirtualClock(100);
    const fired: string[] = [];
    clock.setTimer(50, () => fired.push("b"));
    clock.setTimer(10, () => fired.push("a"));
    clock.setTimer(50, () => fired.push("c"));
    const cancelled = clock.setTimer(20, () => fired.push("never"));
    cancelled.cancel();
    expect(clock.pendingTimers()).toBe(3);
    clock.advance(9);
    expect(fired).toEqual([]);
    clock.advance(41);
    expect(fired).toEqual(["a", "b", "c"]);
    expect(clock.now()).toBe(150);
    expect(clock.next()).toBe(false);
  });

  it("next() jumps to the earliest timer; timers armed while firing run in order", () => {
    const clock = createVirtualClock();
    const fired: number[] = [];
    clock.setTimer(1_000, () => {
      fired.push(clock.now());
      clock.setTimer(0, () => fired.push(clock.now()));
    });
    expect(clock.next()).toBe(true);
    expect(fired).toEqual([1_000, 1_000]);
  });

  it("sleep resolves true after the time, false as soon as its signal aborts", async () => {
    const clock = createVirtualClock();
    const done = clock.sleep(500);
    clock.advance(500);
    expect(await done).toBe(true);
    const ctrl = new AbortController();
    const aborted = clock.sleep(500, ctrl.signal);
    ctrl.abort();
    expect(await aborted).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });
});
