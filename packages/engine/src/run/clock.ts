import type { Clock, Timer } from "@icode/workflow-scheduler";

/** `setTimeout` cannot wait longer than this; longer timers are re-armed. */
const MAX_DELAY_MS = 2_147_483_647;
/** Lanes kept, unreferenced, after their last timer was cancelled (see `Lane`). */
const MAX_IDLE_LANES = 8;

/**
 * The wall clock: event timestamps are milliseconds since the epoch; timers are real timers, measured on the
 * monotonic clock (a change of the system time moves neither).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, callback) {
    const delay = Math.max(ms, 0);
    let lane = lanes.get(delay);
    if (lane === undefined) {
      lane = new Lane(delay);
      lanes.set(delay, lane);
    }
    return lane.add(callback);
  },
};

const lanes = new Map<number, Lane>();
let idleLanes = 0;

class LaneTimer implements Timer {
  constructor(
    private readonly lane: Lane,
    readonly due: number,
    public callback: (() => void) | null,
  ) {}

  cancel(): void {
    if (this.callback === null) return;
    this.callback = null;
    this.lane.cancelled();
  }
}

/**
 * The timers of one delay, due in the order they were armed, behind one Node timer for the earliest. Every
 * attempt of a Python node arms its timeout (300 s by default) and nearly every one is cancelled a few
 * milliseconds later; a Node timer each (an object, a timer-list insert, an unenroll, and in a chain a timer
 * list created and dropped per node) costs more than the rest of the node's scheduling. Here a timer is one
 * small object; a cancelled one stays queued until the lane reaches it. A lane whose timers are all
 * cancelled keeps its Node timer armed but unreferenced (it no longer keeps the process alive), ready for the
 * next attempt; beyond `MAX_IDLE_LANES` idle lanes (delays that do not recur, such as a run deadline) the
 * lane is dropped instead.
 */
class Lane {
  private queue: LaneTimer[] = [];
  private head = 0;
  /** Timers queued and not cancelled. */
  private live = 0;
  private timer: NodeJS.Timeout | null = null;
  private firing = false;

  constructor(private readonly ms: number) {}

  add(callback: () => void): Timer {
    const timer = new LaneTimer(this, performance.now() + this.ms, callback);
    this.queue.push(timer);
    if (++this.live === 1) {
      if (this.timer === null) {
        if (!this.firing) this.arm(this.ms);
      } else {
        idleLanes--;
        this.timer.ref();
      }
    }
    return timer;
  }

  cancelled(): void {
    if (--this.live > 0 || this.firing) return;
    // Nothing live: forget the queue, keep or drop the Node timer.
    this.queue = [];
    this.head = 0;
    if (this.timer === null) return;
    if (idleLanes < MAX_IDLE_LANES) {
      idleLanes++;
      this.timer.unref();
    } else {
      clearTimeout(this.timer);
      this.timer = null;
      lanes.delete(this.ms);
    }
  }

  private arm(delay: number): void {
    this.timer = setTimeout(this.fire, Math.min(delay, MAX_DELAY_MS));
  }

  private readonly fire = (): void => {
    this.timer = null;
    if (this.live === 0) {
      // It was idle (unreferenced), or the lane's last timers were cancelled while it fired.
      idleLanes--;
      lanes.delete(this.ms);
      return;
    }
    this.firing = true;
    const now = performance.now();
    const queue = this.queue;
    while (this.head < queue.length) {
      const next = queue[this.head]!;
      if (next.callback !== null && next.due > now) break;
      this.head++;
      const callback = next.callback;
      if (callback === null) continue;
      next.callback = null;
      this.live--;
      callback();
    }
    this.firing = false;
    if (this.head === queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > queue.length) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
    if (this.live === 0) {
      this.queue = [];
      this.head = 0;
      lanes.delete(this.ms);
      return;
    }
    // Timers armed by the callbacks above are due after the first one still queued.
    this.arm(this.queue[this.head]!.due - now);
  };
}
