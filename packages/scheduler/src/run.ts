import type { Definition } from "@icode/workflow-graph";
import type { Clock } from "./clock";
import type { CancelReason, FailurePolicy } from "./codes";
import { SchedulerError } from "./errors";
import type { RecordSink } from "./events";
import type { AskHandler, Executors } from "./executor";
import { buildGraphIndex, type GraphIndex } from "./graph-index";
import { DEFAULT_MAX_CONCURRENT_AGENTS } from "./limits";
import type { ControlResult, RunResult, RunSnapshot } from "./result";
import { RunScheduler } from "./scheduler";
import type { WorkflowValue } from "./value";

/** Everything one run needs; all effects are injected. */
export interface RunOptions {
  /** The run's ID (32 lowercase hex characters by convention, clarification 21). */
  readonly runId: string;
  readonly definition: Definition;
  /** The start node's input (`--input` text, `data: null`). */
  readonly input: WorkflowValue;
  readonly executors: Executors;
  readonly clock: Clock;
  readonly sink: RecordSink;
  /** Default `fail` (the CLI). */
  readonly policy?: FailurePolicy;
  /** When the run is cancelled with `deadline_exceeded`, on the clock's time base; `null`/absent: never. */
  readonly deadline?: number | null;
  /** Forwards `ctx.ask` questions to the user; absent: questions answer `unavailable`. */
  readonly ask?: AskHandler;
  /** Python or agent node IDs that wait for `approveNode` before their first attempt (approval gates). */
  readonly approvals?: readonly string[];
  /** Concurrent agent attempts per run; default 4. */
  readonly maxConcurrentAgents?: number;
  /** Concurrent Python attempts per run; default unlimited (the executor may queue). */
  readonly maxConcurrentPython?: number;
}

/** Options of `skipNode`. */
export interface SkipOptions {
  /** Recorded with the skip (a pipeline's handoff note). */
  readonly note?: string | null;
  /** Passed downstream in the node's place; without it downstream sees a skipped node. */
  readonly value?: WorkflowValue | null;
}

/**
 * A running workflow: its result and its control surface. Control operations never throw: they answer
 * `{ ok: true }` or a refusal with a code. Activations are named by their ID, `<node_id>@iter#<n>`.
 */
export interface WorkflowRun {
  readonly runId: string;
  /** Settles once the run has ended and the sink has flushed; never rejects for node failures (only for a
   * defect of the scheduler itself, with `SchedulerError("internal_error")`). */
  readonly result: Promise<RunResult>;
  /** Ends the run with outcome `cancelled` and this reason (default `user_cancelled`). */
  cancel(reason?: CancelReason): ControlResult;
  /** Holds new attempts (in-flight ones continue) until `resume()`. */
  pause(): ControlResult;
  resume(): ControlResult;
  /** Retries an activation in `awaiting_retry` (policy `pause`), redoing the phase that failed. */
  retryNode(activationId: string): ControlResult;
  /** Skips an activation that has begun and not settled (not a loop while its body runs). */
  skipNode(activationId: string, options?: SkipOptions): ControlResult;
  /** Lets an activation waiting at an approval gate start. */
  approveNode(activationId: string): ControlResult;
  /** The activations that have begun and not settled. O(live activations). */
  inspect(): RunSnapshot;
}

/** The checked, defaulted options the scheduler runs with. */
export interface ResolvedRun {
  readonly options: RunOptions;
  readonly index: GraphIndex;
  readonly policy: FailurePolicy;
  readonly approvals: ReadonlySet<string>;
  readonly agentLimit: number;
  readonly pythonLimit: number;
}

/**
 * Starts one run of a Definition and returns its handle at once; the run's first events are written before
 * `startRun` returns. Throws `SchedulerError` (`definition_invalid`, `executor_missing`, `options_invalid`)
 * when the run cannot start; everything after that is reported through events and `result`.
 */
export function startRun(options: RunOptions): WorkflowRun {
  const index = buildGraphIndex(options.definition);
  checkExecutors(index, options.executors);
  const approvals = new Set(options.approvals ?? []);
  for (const id of approvals) {
    const kind = index.byId.get(id)?.node.kind;
    if (kind !== "python" && kind !== "agent") {
      throw new SchedulerError(
        "options_invalid",
        `approvals names "${id}", which is not a Python or agent node of the Definition`,
      );
    }
  }
  const scheduler = new RunScheduler({
    options,
    index,
    policy: options.policy ?? "fail",
    approvals,
    agentLimit: checkLimit("maxConcurrentAgents", options.maxConcurrentAgents, DEFAULT_MAX_CONCURRENT_AGENTS),
    pythonLimit: checkLimit("maxConcurrentPython", options.maxConcurrentPython, Number.POSITIVE_INFINITY),
  });
  scheduler.start();
  return scheduler.handle();
}

function checkLimit(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)) return value;
  throw new SchedulerError("options_invalid", `${name} is ${value}; expected a whole number of at least 1`);
}

function checkExecutors(index: GraphIndex, executors: Executors): void {
  const need = (member: keyof Executors, why: string) => {
    if (typeof executors[member] !== "function") {
      throw new SchedulerError(
        "executor_missing",
        `the Definition has ${why} but no ${member} executor was given`,
        { hint: `pass executors.${member}` },
      );
    }
  };
  for (const n of index.nodes) {
    const node = n.node;
    if (node.kind === "python") need("runPython", `Python node "${n.id}"`);
    else if (node.kind === "agent") need("runAgent", `agent node "${n.id}"`);
    else if (node.kind === "loop") need("evaluateUntil", `loop "${n.id}"`);
    else if (node.has_combine) need("combine", `join "${n.id}" with combine`);
    if (n.conditions !== null) need("evaluateConditions", `conditional edges from "${n.id}"`);
  }
}
