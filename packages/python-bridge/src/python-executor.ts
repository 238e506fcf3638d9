import { isWorkflowError } from "@icode/workflow-errors";
import type {
  AttemptIO,
  AttemptResult,
  CallIO,
  CombineResult,
  ConditionsResult,
  Executors,
  NodeError,
  UntilResult,
} from "@icode/workflow-scheduler";
import type { InvokeOptions, InvokeOutcome, InvokeRequest } from "./call";
import type { CallError } from "./protocol";
import type { PythonWorker } from "./worker";

/** What one Python attempt printed, handed to the records as a node diagnostics file. */
export interface AttemptOutput {
  nodeId: string;
  activationId: string;
  attempt: number;
  phase: "node" | "conditions" | "until" | "combine";
  stdout: { text: string; truncated: boolean };
}

export interface PythonExecutorOptions {
  /** Called with every call's captured `print()` output that is not empty. */
  onOutput(output: AttemptOutput): void;
  /**
   * Called once before each batch of calls goes to the worker (the calls the scheduler starts in one turn
   * of the event loop, thousands in a fan-out): the run's events so far must be on disk before user code
   * runs, so that a process killed during a node still shows that the node started.
   */
  beforeSend?: () => void;
  /** Threads of timed-out calls still running in the worker; more than this and the worker counts as lost. */
  maxLeakedThreads?: number;
}

/** Calls sent together at most: a fan-out of thousands goes out in batches of this many as it starts. */
export const SEND_BATCH = 256;

/** Leaked threads a worker may keep before the engine treats it as lost (clarification 19). */
export const DEFAULT_MAX_LEAKED_THREADS = 32;

/** Every executor result type has this failure shape. */
type Failed = { status: "failed"; error: NodeError };

/** A call waiting for the end of the turn to go to the worker, then in flight. */
interface Outgoing<R> {
  readonly request: InvokeRequest;
  readonly io: CallIO;
  /** `onEmit`/`onAsk` of a node call; `registerCancel` is set when the call is sent. */
  readonly options: InvokeOptions;
  /** Turns the worker's outcome into the executor's result. */
  readonly finish: (outcome: InvokeOutcome) => R | Failed;
  readonly resolve: (result: R | Failed) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The scheduler's executors for Python: node functions (with their outgoing conditions in the same round
 * trip), loop `until` and join `combine`, all through one warm worker. Thousands of calls can be in flight
 * (a fan-out), so a call allocates little: no async frames, and no abort signal: the scheduler's `onAbort`
 * cancels the call through the bridge's `registerCancel` (an `AbortController` and a listener per call cost
 * ~6 µs of a fan-out node, and the garbage they leave).
 */
export function pythonExecutors(worker: PythonWorker, options: PythonExecutorOptions): Executors {
  const maxLeaked = options.maxLeakedThreads ?? DEFAULT_MAX_LEAKED_THREADS;
  // Calls started in this turn, sent together once `beforeSend` has run (one records write per batch).
  let queued: Outgoing<unknown>[] = [];

  const sendQueued = (): void => {
    if (queued.length === 0) return;
    const sends = queued;
    queued = [];
    options.beforeSend?.();
    for (const call of sends) send(call);
  };

  function send<R>(call: Outgoing<R>): void {
    // Aborted before the send (the run ended in the same turn): `onAbort` calls back at once, and the bridge
    // cancels the call it just sent.
    call.options.registerCancel = (cancel) => call.io.onAbort(cancel);
    let pending: Promise<InvokeOutcome>;
    try {
      pending = worker.invoke(call.request, call.options);
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (outcome) => {
        try {
          call.resolve(call.finish(outcome));
        } catch (error) {
          call.reject(error);
        }
      },
      (error: unknown) => call.resolve({ status: "failed", error: invokeFailure(error) }),
    );
  }

  /** Sends `request` with the batch of this turn; node errors and a lost worker are results, not rejections. */
  function call<R>(
    request: InvokeRequest,
    io: CallIO,
    finish: (outcome: InvokeOutcome) => R | Failed,
    invokeOptions: InvokeOptions = {},
  ): Promise<R | Failed> {
    return new Promise<R | Failed>((resolve, reject) => {
      const call: Outgoing<R> = { request, io, options: invokeOptions, finish, resolve, reject };
      // A large fan-out is sent in batches as it starts: the worker runs the first calls while the
      // scheduler starts the rest (their events are written before each batch, as for the last one).
      if (queued.length >= SEND_BATCH) sendQueued();
      if (queued.push(call as Outgoing<unknown>) === 1) queueMicrotask(sendQueued);
    });
  }

  function lost(outcome: InvokeOutcome): Failed | null {
    if (outcome.leaked_threads <= maxLeaked) return null;
    return {
      status: "failed",
      error: {
        class: "worker_lost",
        message: `the Python worker has ${outcome.leaked_threads} threads of timed-out calls still running (limit ${maxLeaked}); it is treated as lost`,
        retryable: false,
        traceback: null,
      },
    };
  }

  /**
   * A call's outcome after the checks every kind shares: its print() output is recorded, then it fails
   * when the worker is lost, the call failed, or the worker answered another kind of call.
   */
  function succeeded<K extends InvokeRequest["kind"]>(
    kind: K,
    outcome: InvokeOutcome,
    nodeId: string,
    activationId: string,
    n: number,
  ): Extract<InvokeOutcome, { ok: true; kind: K }> | Failed {
    record(nodeId, activationId, n, outcome);
    const gone = lost(outcome);
    if (gone !== null) return gone;
    if (!outcome.ok) return { status: "failed", error: nodeError(outcome.error) };
    if (outcome.kind !== kind) return unexpected(outcome.kind);
    return outcome as Extract<InvokeOutcome, { ok: true; kind: K }>;
  }

  function record(nodeId: string, activationId: string, attempt: number, outcome: InvokeOutcome) {
    if (outcome.output.text === "" && !outcome.output.truncated) return;
    const phase = outcome.ok ? "node" : outcome.error.phase;
    options.onOutput({ nodeId, activationId, attempt, phase, stdout: outcome.output });
  }

  return {
    runPython(request, io: AttemptIO): Promise<AttemptResult> {
      const nodeId = request.node.id;
      return call(
        {
          kind: "node",
          node: nodeId,
          input: request.input,
          timeout_ms: request.timeoutMs,
          conditions: request.conditions,
          conditions_timeout_ms: request.conditionTimeoutMs,
        },
        io,
        (outcome): AttemptResult => {
          record(nodeId, request.activationId, request.attempt, outcome);
          const gone = lost(outcome);
          if (gone !== null) return gone;
          if (!outcome.ok) {
            return {
              status: "failed",
              error: nodeError(outcome.error),
              phase: outcome.error.phase === "conditions" ? "conditions" : "node",
            };
          }
          if (outcome.kind !== "node") return unexpected(outcome.kind);
          return {
            status: "completed",
            value: outcome.value,
            decisions: request.conditions === null ? null : { passed: outcome.passed },
          };
        },
        {
          onEmit: (text) => io.emit(text),
          onAsk: async (questions) => {
            const response = await io.ask({ questions });
            return response.status === "answered" ? response.answers : null;
          },
        },
      );
    },

    evaluateConditions(request, io) {
      return call(
        {
          kind: "conditions",
          source: request.nodeId,
          input: request.value,
          conditions: request.conditions,
          timeout_ms: request.timeoutMs,
        },
        io,
        (outcome): ConditionsResult => {
          const done = succeeded("conditions", outcome, request.nodeId, request.activationId, 1);
          return "status" in done ? done : { status: "decided", decisions: { passed: done.passed } };
        },
      );
    },

    evaluateUntil(request, io) {
      return call(
        { kind: "until", loop: request.node.id, input: request.value, timeout_ms: request.timeoutMs },
        io,
        (outcome): UntilResult => {
          const done = succeeded("until", outcome, request.node.id, request.activationId, request.iteration);
          return "status" in done ? done : { status: "decided", stop: done.stop };
        },
      );
    },

    combine(request, io) {
      return call(
        {
          kind: "combine",
          join: request.node.id,
          sources: [...request.sources],
          timeout_ms: request.timeoutMs,
        },
        io,
        (outcome): CombineResult => {
          const done = succeeded("combine", outcome, request.node.id, request.activationId, 1);
          return "status" in done ? done : { status: "completed", value: done.value };
        },
      );
    },
  };
}

/** `invoke` rejected: the worker is gone (`worker_lost`), or a defect. */
function invokeFailure(error: unknown): NodeError {
  if (isWorkflowError(error) && error.code === "worker_lost") {
    return { class: "worker_lost", message: error.message, retryable: false, traceback: null };
  }
  return {
    class: "internal_error",
    message: error instanceof Error ? error.message : String(error),
    retryable: false,
    traceback: null,
  };
}

/** The bridge's error codes become the scheduler's error classes (the phase names what failed). */
function nodeError(error: CallError): NodeError {
  const cls =
    error.code === "exception"
      ? error.phase === "node"
        ? "exception"
        : `${error.phase === "conditions" ? "condition" : error.phase}_failed`
      : error.code === "timeout" && error.phase !== "node"
        ? `${error.phase === "conditions" ? "condition" : error.phase}_timeout`
        : error.code;
  const where = error.edge === null ? "" : ` (edge ${error.edge})`;
  return {
    class: cls,
    message: `${error.message}${where}`,
    retryable: error.phase === "node" && (error.code === "exception" || error.code === "timeout"),
    traceback: error.traceback,
  };
}

function unexpected(kind: string): Failed {
  return {
    status: "failed",
    error: {
      class: "internal_error",
      message: `the worker answered a ${kind} call out of place`,
      retryable: false,
      traceback: null,
    },
  };
}
