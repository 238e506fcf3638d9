import type { Definition } from "@icode/workflow-graph";
import type { Clock } from "./clock";
import type { CancelReason, FailurePolicy } from "./codes";
import type { RecordSink } from "./events";
import type { AskHandler, Executors } from "./executor";
import type { GraphIndex } from "./graph-index";
import type { Answer, PendingAsk } from "./interaction";
import type { ControlResult, RunResult, RunSnapshot } from "./result";
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
  /**
   * Who answers `ctx.ask`: a handler called for each ask, and/or `acceptAnswers` for answers given through
   * `WorkflowRun.answer` by anyone (a server's front ends). The first valid answer wins. With neither, asks
   * answer `unavailable` at once (the CLI: `ask_unavailable`).
   */
  readonly ask?: AskHandler;
  readonly acceptAnswers?: boolean;
  /** Python or agent node IDs that wait for `approveNode` before their first attempt (approval gates). */
  readonly approvals?: readonly string[];
  /** Concurrent agent attempts per run; default 4. */
  readonly maxConcurrentAgents?: number;
  /** Concurrent Python attempts per run; default unlimited (the executor may queue). */
  readonly maxConcurrentPython?: number;
  /** The `seq` of the run's first event (default 0): the host wrote events `0 … firstSeq-1` itself. */
  readonly firstSeq?: number;
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
  /**
   * Answers a waiting ask (`askId` from its `question` event or `pendingAsks()`): one answer per question.
   * An answer that does not fit is refused (`answer_invalid`) and the node keeps waiting.
   */
  answer(askId: string, answers: readonly Answer[]): ControlResult;
  /** The asks waiting for an answer, with their full questions. */
  pendingAsks(): PendingAsk[];
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
