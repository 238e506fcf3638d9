import { type CancelCall, callError, type InvokeRequest, type PendingCall } from "./call";
import { LIMITS } from "./protocol";

/** Extra time the engine gives a worker to report a timeout itself before settling the call on its own. */
export const BACKSTOP_GRACE_MS = 2_000;
/** How often pending calls are checked against their backstop (one timer for all calls, not one per call). */
const BACKSTOP_SWEEP_MS = 100;

/**
 * The worker enforces every call's time limit itself; this settles a call whose answer is overdue anyway
 * (`timeout`), for a worker whose event loop is blocked (an `async def` node calling blocking code). One
 * timer sweeps every pending call, running while some pending call has a backstop.
 */
export class Backstop {
  /** Whether a sweep is scheduled: read by the caller on every call, so that arming costs no call then. */
  armed = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly calls: ReadonlyMap<number, PendingCall>,
    private readonly cancel: CancelCall,
  ) {}

  /** A call with `backstopAt` is pending: make sure the sweep runs. */
  arm(): void {
    if (this.timer !== null || this.stopped) return;
    this.timer = setTimeout(this.sweep, BACKSTOP_SWEEP_MS);
    this.armed = true;
  }

  /** The worker is gone: no more sweeps. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armed = false;
  }

  private readonly sweep = (): void => {
    this.timer = null;
    this.armed = false;
    const now = performance.now();
    let waiting = false;
    for (const call of [...this.calls.values()]) {
      if (call.backstopAt === null) continue;
      if (now < call.backstopAt) {
        waiting = true;
        continue;
      }
      this.cancel(
        call,
        callError(
          "timeout",
          `the worker did not answer within ${call.backstopMs / 1000} s: its event loop is blocked ` +
            "(an async def node calling blocking code?)",
          call.kind,
        ),
      );
    }
    if (waiting) this.arm();
  };
}

/** The time the worker itself may take for `request` (its limits added up), or `null` for none. */
export function backstopMs(request: InvokeRequest): number | null {
  if (request.kind === "node") {
    if (request.timeout_ms === null) return null;
    const conditions =
      request.conditions === null ? 0 : (request.conditions_timeout_ms ?? LIMITS.callableTimeoutMs);
    return request.timeout_ms + conditions;
  }
  return request.timeout_ms ?? LIMITS.callableTimeoutMs;
}
