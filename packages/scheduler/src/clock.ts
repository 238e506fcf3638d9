/**
 * Time, injected: the scheduler reads `now()` for event timestamps and arms timers for attempt timeouts,
 * condition limits, retry backoff and the run deadline. It never calls `Date.now()` or `setTimeout` itself.
 */
export interface Clock {
  /** Milliseconds on the clock's own time base (epoch milliseconds for a wall clock). */
  now(): number;
  /** Calls `callback` once after `delayMs` milliseconds unless cancelled first. */
  setTimer(delayMs: number, callback: () => void): Timer;
}

export interface Timer {
  /** Idempotent; a cancelled timer never fires. */
  cancel(): void;
}
