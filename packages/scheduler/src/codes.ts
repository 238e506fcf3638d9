import { z } from "zod";

/**
 * The closed lists of codes the scheduler speaks: run outcomes, cancellation reasons, failure policies, the
 * error classes it produces itself, and the codes of refused control operations. Each is a const tuple plus
 * its `z.enum`, so events, results and tests share one spelling.
 */

/** Run outcomes (the spec's "Run outcomes and recovery" table). `orphaned` is written on restore, never here. */
export const RUN_OUTCOMES = [
  "completed",
  "node_failed",
  "loop_exhausted",
  "cancelled",
  "worker_lost",
  "storage_failed",
  "orphaned",
] as const;
export const RunOutcomeSchema = z.enum(RUN_OUTCOMES);
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

/**
 * Why a run was cancelled; the run's `reason` is `""` for every other outcome (clarification 11).
 * - `deadline_exceeded`: the run deadline (`--timeout`) passed (the spec's code).
 * - `user_cancelled`: a person asked for it (TUI "cancel", a control API call).
 * - `interrupted`: the host process was interrupted (Ctrl-C, SIGINT, SIGTERM).
 * - `shutdown`: the embedding application is closing and ends its runs.
 */
export const CANCEL_REASONS = ["deadline_exceeded", "user_cancelled", "interrupted", "shutdown"] as const;
export const CancelReasonSchema = z.enum(CANCEL_REASONS);
export type CancelReason = z.infer<typeof CancelReasonSchema>;

/**
 * What a run does when a node fails and cannot retry automatically.
 * - `fail`: the run ends at once (`node_failed`); in-flight branches are cancelled (the CLI).
 * - `pause`: the node enters `awaiting_retry`; other branches keep running; `retryNode`, `skipNode` or
 *   `cancel` decide (the TUI).
 * - `fail_fast`: nothing new starts, attempts already running finish, then the run ends failed.
 * - `continue`: independent branches keep running; nodes downstream of the failure are cancelled with
 *   `upstream_failed`; the run ends failed once everything has settled.
 */
export const FAILURE_POLICIES = ["fail", "pause", "fail_fast", "continue"] as const;
export const FailurePolicySchema = z.enum(FAILURE_POLICIES);
export type FailurePolicy = z.infer<typeof FailurePolicySchema>;

/**
 * Error classes the scheduler itself assigns. Executors report their own classes too (`exception`,
 * `value_not_serializable`, `value_too_large`, `ask_unavailable`, `protocol_limit`, `worker_lost`, agent
 * classes …); an error class is any string, these are the ones with a fixed meaning here.
 */
export const SCHEDULER_ERROR_CLASSES = [
  /** The attempt ran past the node's `timeout`. Retried while attempts remain. */
  "timeout",
  /** An outgoing-edge condition raised. */
  "condition_failed",
  /** The node's batch of outgoing-edge conditions ran past 30 s. */
  "condition_timeout",
  /** A loop's `until` raised. */
  "until_failed",
  /** A loop's `until` ran past 30 s. */
  "until_timeout",
  /** A join's `combine` raised. */
  "combine_failed",
  /** A join's `combine` ran past 30 s. */
  "combine_timeout",
  /** The loop's exit node was skipped in an iteration. */
  "loop_no_value",
  /** `max_iterations` reached with `on_exhausted="fail"`. */
  "loop_exhausted",
  /** A node of the loop body failed under the `continue` or `fail_fast` policy. */
  "loop_body_failed",
  /** The host's ask handler threw, or returned something that is not an answer to the questions. */
  "ask_handler_failed",
  /** The executor broke its contract (threw, returned an invalid result or undecidable edge decisions). */
  "internal_error",
] as const;

/** Error classes never retried automatically, whatever the executor's `retryable` flag and `Retry` say. */
export const NEVER_RETRIED_CLASSES: ReadonlySet<string> = new Set([
  "condition_failed",
  "condition_timeout",
  "until_failed",
  "until_timeout",
  "combine_failed",
  "combine_timeout",
  "loop_no_value",
  "loop_exhausted",
  "loop_body_failed",
  "value_not_serializable",
  "value_too_large",
  "ask_unavailable",
  "ask_handler_failed",
  "protocol_limit",
  "worker_lost",
  "internal_error",
]);

/** Why a node activation was recorded `node_cancelled`. */
export const NODE_CANCEL_REASONS = [
  ...CANCEL_REASONS,
  /** Another node failed and the run ended (`fail` policy) or stopped starting work (`fail_fast`). */
  "run_failed",
  /** An upstream node failed under the `continue` policy, so this node can never get its input. */
  "upstream_failed",
  "worker_lost",
  "storage_failed",
] as const;
export const NodeCancelReasonSchema = z.enum(NODE_CANCEL_REASONS);
export type NodeCancelReason = z.infer<typeof NodeCancelReasonSchema>;

/** Why a node was skipped: no source passed it a value, or a person skipped it (`skipNode`). */
export const SKIP_REASONS = ["no_input", "user_skipped"] as const;
export const SkipReasonSchema = z.enum(SKIP_REASONS);
export type SkipReason = z.infer<typeof SkipReasonSchema>;

/**
 * Where a node failed, which is also what a manual `retryNode` redoes:
 * `node` reruns the whole function or agent (also after a failed outgoing condition of a Python or agent
 * node), `conditions` re-evaluates only a loop node's outgoing conditions, `until` only its stop condition,
 * `iteration` reruns the loop's last iteration (after `loop_no_value`), `combine` calls the join's `combine`
 * again.
 */
export const FAILURE_PHASES = ["node", "conditions", "until", "iteration", "combine"] as const;
export const FailurePhaseSchema = z.enum(FAILURE_PHASES);
export type FailurePhase = z.infer<typeof FailurePhaseSchema>;

/** Codes of a refused control operation (`retryNode`, `skipNode`, …). */
export const CONTROL_ERROR_CODES = [
  /** The run has not been accepted yet (an engine wrapper refuses control until it starts). */
  "not_started",
  /** No run with that ID is driven here (an engine wrapper's registry). */
  "unknown_run",
  "run_finished",
  "unknown_activation",
  "not_awaiting_retry",
  "not_waiting_approval",
  "not_skippable",
  "already_paused",
  "not_paused",
  /** `answer` names no question that is waiting (never asked, already answered, or its attempt ended). */
  "unknown_question",
  /** `answer` does not fit the question (a label it does not offer, two labels for a single-select…). */
  "answer_invalid",
] as const;
export const ControlErrorCodeSchema = z.enum(CONTROL_ERROR_CODES);
export type ControlErrorCode = z.infer<typeof ControlErrorCodeSchema>;
