import type { CallError, InvokeOutcome, PythonWorker } from "@icode/python-bridge";
import { isWorkflowError } from "@icode/workflow-errors";
import type { AttemptIO, AttemptResult, CallIO, Executors, NodeError } from "@icode/workflow-scheduler";

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

/** Leaked threads a worker may keep before the engine treats it as lost (clarification 19). */
export const DEFAULT_MAX_LEAKED_THREADS = 32;

/**
 * The scheduler's executors for Python: node functions (with their outgoing conditions in the same round
 * trip), loop `until` and join `combine`, all through one warm worker.
 */
export function pythonExecutors(worker: PythonWorker, options: PythonExecutorOptions): Executors {
  const maxLeaked = options.maxLeakedThreads ?? DEFAULT_MAX_LEAKED_THREADS;
  // Calls started in this turn, sent together once `beforeSend` has run (one records write per batch).
  let batch: (() => void)[] = [];

  function sendSoon(send: () => void): void {
    batch.push(send);
    if (batch.length > 1) return;
    queueMicrotask(() => {
      const sends = batch;
      batch = [];
      options.beforeSend?.();
      for (const send of sends) send();
    });
  }

  async function call(
    request: Parameters<PythonWorker["invoke"]>[0],
    io: CallIO,
    extra: Parameters<PythonWorker["invoke"]>[1] = {},
  ): Promise<InvokeOutcome | NodeError> {
    try {
      return await new Promise<InvokeOutcome>((resolve, reject) =>
        sendSoon(() => {
          try {
            worker.invoke(request, { ...extra, signal: io.signal }).then(resolve, reject);
          } catch (error) {
            reject(error);
          }
        }),
      );
    } catch (error) {
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
  }

  function lost(outcome: InvokeOutcome): NodeError | null {
    if (outcome.leaked_threads <= maxLeaked) return null;
    return {
      class: "worker_lost",
      message: `the Python worker has ${outcome.leaked_threads} threads of timed-out calls still running (limit ${maxLeaked}); it is treated as lost`,
      retryable: false,
      traceback: null,
    };
  }

  function record(nodeId: string, activationId: string, attempt: number, outcome: InvokeOutcome) {
    if (outcome.output.text === "" && !outcome.output.truncated) return;
    const phase = outcome.ok ? "node" : outcome.error.phase;
    options.onOutput({ nodeId, activationId, attempt, phase, stdout: outcome.output });
  }

  return {
    async runPython(request, io: AttemptIO): Promise<AttemptResult> {
      const outcome = await call(
        {
          kind: "node",
          node: request.node.id,
          input: request.input,
          timeout_ms: request.timeoutMs,
          conditions: request.conditions,
          conditions_timeout_ms: request.conditionTimeoutMs,
        },
        io,
        {
          onEmit: (text) => io.emit(text),
          onAsk: async (questions) => {
            const response = await io.ask({ questions });
            return response.status === "answered" ? response.answers : null;
          },
        },
      );
      if (!("ok" in outcome)) return { status: "failed", error: outcome };
      record(request.node.id, request.activationId, request.attempt, outcome);
      const gone = lost(outcome);
      if (gone !== null) return { status: "failed", error: gone };
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

    async evaluateConditions(request, io) {
      const outcome = await call(
        {
          kind: "conditions",
          source: request.nodeId,
          input: request.value,
          conditions: request.conditions,
          timeout_ms: request.timeoutMs,
        },
        io,
      );
      if (!("ok" in outcome)) return { status: "failed", error: outcome };
      record(request.nodeId, request.activationId, 1, outcome);
      if (!outcome.ok) return { status: "failed", error: nodeError(outcome.error) };
      if (outcome.kind !== "conditions") return unexpected(outcome.kind);
      return { status: "decided", decisions: { passed: outcome.passed } };
    },

    async evaluateUntil(request, io) {
      const outcome = await call(
        { kind: "until", loop: request.node.id, input: request.value, timeout_ms: request.timeoutMs },
        io,
      );
      if (!("ok" in outcome)) return { status: "failed", error: outcome };
      record(request.node.id, request.activationId, request.iteration, outcome);
      if (!outcome.ok) return { status: "failed", error: nodeError(outcome.error) };
      if (outcome.kind !== "until") return unexpected(outcome.kind);
      return { status: "decided", stop: outcome.stop };
    },

    async combine(request, io) {
      const outcome = await call(
        {
          kind: "combine",
          join: request.node.id,
          sources: [...request.sources],
          timeout_ms: request.timeoutMs,
        },
        io,
      );
      if (!("ok" in outcome)) return { status: "failed", error: outcome };
      record(request.node.id, request.activationId, 1, outcome);
      if (!outcome.ok) return { status: "failed", error: nodeError(outcome.error) };
      if (outcome.kind !== "combine") return unexpected(outcome.kind);
      return { status: "completed", value: outcome.value };
    },
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

function unexpected(kind: string): { status: "failed"; error: NodeError } {
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
