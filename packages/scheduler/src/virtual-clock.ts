import type { Clock, Timer } from "./clock";

/**
 * A `Clock` on virtual time for tests and simulations: nothing fires until the test moves time with
 * `advance(ms)` or `next()`. Timers due at the same instant fire in the order they were armed.
 *
 * @example
 * const clock = createVirtualClock();
 * clock.setTimer(1000, () => console.log("later"));
 * clock.advance(999); // nothing
 * clock.advance(1);   // "later"; clock.now() === 1000
 */
export interface VirtualClock extends Clock {
  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void;
  /** Jumps to the earliest armed timer and fires it (and any others due then). `false` if none is armed. */
  next(): boolean;
  /** Number of armed, not yet fired or cancelled timers. */
  pendingTimers(): number;
  /** A promise resolved with `true` after `ms` of virtual time, or with `false` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean>;
}

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  live: boolean;
}

export function createVirtualClock(start = 0): VirtualClock {
  let now = start;
  let seq = 0;
  let live = 0;
  const heap: Entry[] = [];

  const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
  const push = (entry: Entry) => {
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const pop = (): Entry | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  const peekLive = (): Entry | undefined => {
    while (heap.length > 0 && !heap[0]!.live) pop();
    return heap[0];
  };
  const fire = (entry: Entry) => {
    pop();
    entry.live = false;
    live--;
    entry.callback();
  };

  const clock: VirtualClock = {
    now: () => now,
    setTimer(delayMs, callback): Timer {
      const entry: Entry = { at: now + Math.max(0, delayMs), seq: seq++, callback, live: true };
      live++;
      push(entry);
      return {
        cancel() {
          if (!entry.live) return;
          entry.live = false;
          live--;
        },
      };
    },
    advance(ms) {
      const target = now + ms;
      for (let top = peekLive(); top !== undefined && top.at <= target; top = peekLive()) {
        now = top.at;
        fire(top);
      }
      now = target;
    },
    next() {
      const top = peekLive();
      if (top === undefined) return false;
      now = Math.max(now, top.at);
      fire(top);
      for (let due = peekLive(); due !== undefined && due.at <= now; due = peekLive()) fire(due);
      return true;
    },
    pendingTimers: () => live,
    sleep(ms, signal) {
      return new Promise<boolean>((resolve) => {
        if (signal?.aborted) return resolve(false);
        const onAbort = () => {
          timer.cancel();
          resolve(false);
        };
        const timer = clock.setTimer(ms, () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(true);
        });
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
  };
  return clock;
}
