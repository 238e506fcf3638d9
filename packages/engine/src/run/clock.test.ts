import { describe, expect, it } from "vitest";
import { systemClock } from "./clock";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Node timers that keep the process alive (an unreferenced one is not listed). */
const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("systemClock", () => {
  it("reads the wall clock", () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it("fires each timer once, not before its delay, in the order they are due", async () => {
    const fired: string[] = [];
    const start = performance.now();
    const at: Record<string, number> = {};
    const mark = (name: string) => () => {
      fired.push(name);
      at[name] = performance.now() - start;
    };
    // The order follows each timer's due time (when it was set + its delay), measured here rather than
    // assumed: on a loaded machine the 5 ms sleep can take far longer than 5 ms.
    const due: Record<string, number> = {};
    const set = (name: string, ms: number) => {
      due[name] = performance.now() - start + ms;
      systemClock.setTimer(ms, mark(name));
    };
    set("a150", 150);
    set("b60", 60);
    await sleep(5);
    set("c150", 150);
    set("d0", 0);
    await sleep(400);
    expect(fired).toEqual(Object.keys(due).sort((x, y) => due[x]! - due[y]!));
    expect(at.b60).toBeGreaterThanOrEqual(59);
    expect(at.a150).toBeGreaterThanOrEqual(149);
    expect(at.c150).toBeGreaterThanOrEqual(154);
  });

  it("never fires a cancelled timer, and cancel is idempotent", async () => {
    const fired: string[] = [];
    const a = systemClock.setTimer(15, () => fired.push("a"));
    systemClock.setTimer(15, () => fired.push("b"));
    const c = systemClock.setTimer(15, () => fired.push("c"));
    a.cancel();
    a.cancel();
    c.cancel();
    await sleep(60);
    expect(fired).toEqual(["b"]);
    c.cancel();
  });

  it("fires timers armed by a timer's callback on their own delay", async () => {
    const fired: string[] = [];
    const start = performance.now();
    let second = 0;
    systemClock.setTimer(20, () => {
      fired.push("first");
      systemClock.setTimer(20, () => {
        fired.push("second");
        second = performance.now() - start;
      });
    });
    systemClock.setTimer(25, () => fired.push("other"));
    await sleep(200);
    expect(fired).toEqual(["first", "other", "second"]);
    expect(second).toBeGreaterThanOrEqual(39);
  });

  it("lets a timer cancel another of the same delay that is due at the same time", async () => {
    const fired: string[] = [];
    let b: { cancel(): void } | null = null;
    systemClock.setTimer(10, () => {
      fired.push("a");
      b?.cancel();
    });
    b = systemClock.setTimer(10, () => fired.push("b"));
    systemClock.setTimer(10, () => fired.push("c"));
    await sleep(50);
    expect(fired).toEqual(["a", "c"]);
  });

  it("does not keep the process alive once every timer is cancelled, and does again for a new one", async () => {
    const before = refTimers();
    const timers = Array.from({ length: 50 }, () => systemClock.setTimer(300_000, () => {}));
    expect(refTimers()).toBe(before + 1);
    for (const timer of timers) timer.cancel();
    expect(refTimers()).toBe(before);
    let fired = false;
    const again = systemClock.setTimer(300_000, () => {});
    expect(refTimers()).toBe(before + 1);
    again.cancel();
    expect(refTimers()).toBe(before);
    // A short lane that was idle still fires new timers on time.
    systemClock.setTimer(5, () => {}).cancel();
    systemClock.setTimer(5, () => {
      fired = true;
    });
    await sleep(40);
    expect(fired).toBe(true);
    expect(refTimers()).toBe(before);
  });

  it("drops idle lanes of delays that do not recur", async () => {
    const before = refTimers();
    // Many distinct delays, each armed and cancelled once (as a run deadline is): none keeps the process alive.
    for (let i = 0; i < 100; i++) systemClock.setTimer(1_000_000 + i, () => {}).cancel();
    expect(refTimers()).toBe(before);
    let fired = 0;
    for (let i = 0; i < 20; i++) systemClock.setTimer(3 + i, () => fired++);
    await sleep(80);
    expect(fired).toBe(20);
  });
});
