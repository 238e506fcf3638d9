import { type CancelCall, callError, type PendingCall } from "./call";

/** How often the abort signals of young calls are looked at, and from what age a call gets a listener. */
const SIGNAL_POLL_MS = 2;
const SIGNAL_LISTEN_MS = 50;

/**
 * Cancels pending calls whose `signal` aborts. Adding a listener to an `AbortSignal` costs more than the
 * rest of a call, and most calls are over within milliseconds, so a call's signal is polled every
 * `SIGNAL_POLL_MS` until it is `SIGNAL_LISTEN_MS` old, and only then gets a listener (from then on an abort
 * cancels it at once). One timer for all calls, running while young calls with a signal are pending.
 */
export class SignalWatch {
  /** The pending calls of each listened-to signal (one call, or several sharing a signal). */
  private readonly bySignal = new Map<AbortSignal, PendingCall | Set<PendingCall>>();
  /** Calls with a signal younger than `SIGNAL_LISTEN_MS`, polled. */
  private young: PendingCall[] = [];
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly cancel: CancelCall) {}

  /** Watches a call that has `options.signal`, from the moment it was sent. */
  add(call: PendingCall): void {
    this.young.push(call);
    this.timer ??= setTimeout(this.poll, SIGNAL_POLL_MS);
  }

  /** Forgets a settled call (its signal's entry; a polled call is dropped at the next poll). */
  release(call: PendingCall): void {
    const signal = call.options.signal;
    if (signal === undefined) return;
    const calls = this.bySignal.get(signal);
    if (calls === call) this.bySignal.delete(signal);
    else if (calls instanceof Set) {
      calls.delete(call);
      if (calls.size === 0) this.bySignal.delete(signal);
    }
  }

  /** The worker is gone: no more polling. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.young = [];
  }

  private readonly poll = (): void => {
    this.timer = null;
    const now = performance.now();
    const young = this.young;
    let kept = 0;
    for (const call of young) {
      if (call.done) continue;
      const signal = call.options.signal!;
      if (signal.aborted) this.cancel(call, callError("cancelled", "the call was cancelled", call.kind));
      else if (now - call.startedAt >= SIGNAL_LISTEN_MS) this.listen(call, signal);
      else young[kept++] = call;
    }
    young.length = kept;
    if (kept > 0 && !this.stopped) this.timer = setTimeout(this.poll, SIGNAL_POLL_MS);
  };

  /**
   * One listener per signal, shared by every call (an `AbortSignal` ignores a listener added twice), and
   * never removed (that would cost as much again). A signal that outlives its calls keeps one idle
   * listener; when it aborts, the calls still pending on it cancel.
   */
  private listen(call: PendingCall, signal: AbortSignal): void {
    const others = this.bySignal.get(signal);
    if (others === undefined) this.bySignal.set(signal, call);
    else if (others instanceof Set) others.add(call);
    else this.bySignal.set(signal, new Set([others, call]));
    signal.addEventListener("abort", this.onAbort);
  }

  private readonly onAbort = (event: Event): void => {
    const calls = this.bySignal.get(event.target as AbortSignal);
    if (calls === undefined) return;
    for (const call of calls instanceof Set ? [...calls] : [calls]) {
      this.cancel(call, callError("cancelled", "the call was cancelled", call.kind));
    }
  };
}
