import type { WorkflowError } from "@icode/workflow-errors";
import type { z } from "zod";
import type { Answer, CallError, CallPhase, InvokeMessageSchema, Question, ResultOutcome } from "./protocol";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What `invoke` sends: an `invoke` message without `type` and `id`. */
export type InvokeRequest = DistributiveOmit<z.infer<typeof InvokeMessageSchema>, "type" | "id">;
/** How a call ended: a `result` message without `type` and `id`. Call failures are results, not rejections. */
export type InvokeOutcome = ResultOutcome;

export interface InvokeOptions {
  /**
   * Aborting sends `cancel` and settles the call with `error.code: "cancelled"`: within 2 ms while the
   * call is younger than 50 ms (its signal is polled), at once after that (it is listened to).
   */
  signal?: AbortSignal;
  /**
   * For a caller that already knows when to abort (a scheduler calls back once per attempt) and would rather
   * not make an `AbortController` per call: called once, before the call is sent, with a function that
   * cancels it as aborting `signal` does. Called at once, the call is not sent and settles "cancelled before
   * it started"; later it sends `cancel` and settles the call with `error.code: "cancelled"`; after the call
   * settled it does nothing.
   */
  registerCancel?: (cancel: () => void) => void;
  /** `ctx.emit(text)` of this call, in order. Not called after the call settled. */
  onEmit?: (text: string) => void;
  /**
   * `await ctx.ask(...)` of this call: resolve the answers (one per question, in order), or `null` when the
   * user cannot be asked. Without `onAsk` every question is answered `ask_unavailable`. `signal` aborts when
   * the call settles first.
   */
  onAsk?: (questions: Question[], signal: AbortSignal) => Promise<Answer[] | null>;
}

/**
 * One call sent to the worker and not settled yet. Thousands can be in flight (a fan-out), so it is one
 * object with fixed fields: the parts of the worker that watch calls (signals, backstop, questions) keep
 * their state here instead of allocating their own per call.
 */
export class PendingCall {
  /** Settled (or rejected): off the worker's pending calls. */
  done = false;
  emits = 0;
  emitBytes = 0;
  /** Questions being asked, by `ask_id`: aborted when the call settles. */
  asks: Map<number, AbortController> | null = null;

  constructor(
    readonly id: number,
    readonly kind: InvokeRequest["kind"],
    readonly resolve: (outcome: InvokeOutcome) => void,
    readonly reject: (error: WorkflowError) => void,
    readonly options: InvokeOptions,
    /** `performance.now()` when it was sent. */
    readonly startedAt: number,
    /** When the engine settles the call itself if the worker has not (`performance.now()`), or `null`. */
    readonly backstopAt: number | null,
    readonly backstopMs: number,
  ) {}
}

/** Settles a pending call with a failure decided by the engine (it sends `cancel` to the worker first). */
export type CancelCall = (call: PendingCall, error: CallError) => void;

export function callError(code: CallError["code"], message: string, phase: CallPhase): CallError {
  return { code, message, phase, edge: null, traceback: null, file: null, line: null };
}

export function failed(error: CallError): InvokeOutcome {
  return { ok: false, error, output: { text: "", truncated: false }, leaked_threads: 0 };
}
