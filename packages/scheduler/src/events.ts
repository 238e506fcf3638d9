import { z } from "zod";
import { AgentActivitySchema } from "./activity";
import { FailurePhaseSchema, FailurePolicySchema, NodeCancelReasonSchema, SkipReasonSchema } from "./codes";
import { NodeErrorSchema } from "./executor";
import { HOST_EVENT_SCHEMAS } from "./host-events";
import { QuestionSchema } from "./interaction";
import { RunEndSchema } from "./result";
import { WorkflowValueSchema } from "./value";

/**
 * The scheduler's typed event stream: one discriminated union on `type`. Every state change of a run is
 * one event, delivered in order to the injected `RecordSink`; `events.jsonl`, CLI progress lines, the run
 * JSON, exports and UIs are all views of it. Every event carries `run_id`, `seq` (0, 1, 2, … per run, no
 * gaps while the sink accepts writes) and `ts` (the injected clock's `now()`, milliseconds).
 *
 * Values (`input`, `value`, `outputs`) are the objects the nodes produced, by reference; a sink that
 * persists events may summarize them. The host that runs the scheduler (the engine) writes a few events of
 * its own into the same stream (`./host-events`), so that a replay of a run shows everything it showed live.
 */

const base = {
  run_id: z.string(),
  seq: z.number().int().min(0),
  ts: z.number(),
};

/** Identifies one activation: `<node_id>@iter#<n>` (clarification 21). */
const activation = {
  ...base,
  node_id: z.string(),
  activation_id: z.string(),
  /** 1 for top-level nodes, the loop iteration for body nodes. */
  iteration: z.number().int().min(1),
  /** The loop whose body holds the node, or `null` at the top level. */
  loop_id: z.string().nullable(),
};

const attempt = { ...activation, attempt: z.number().int().min(1) };

const NodeKindSchema = z.enum(["python", "agent", "loop", "join"]);

const WorkflowRunStartEventSchema = z.object({
  ...base,
  type: z.literal("workflow_run_start"),
  title: z.string(),
  start: z.string(),
  input: WorkflowValueSchema,
  policy: FailurePolicySchema,
  /** The run deadline on the clock's time base, or `null`. */
  deadline: z.number().nullable(),
  node_count: z.number().int().min(0),
  edge_count: z.number().int().min(0),
  /** The output node IDs, in `output()` order. */
  outputs: z.array(z.string()),
});

/** The run's end: `RunEndSchema` (`./result`), the same fields as the run JSON and `RunResult`. */
const WorkflowRunEndEventSchema = z.object({
  ...base,
  type: z.literal("workflow_run_end"),
  ...RunEndSchema.shape,
});

const WorkflowRunPausedEventSchema = z.object({ ...base, type: z.literal("workflow_run_paused") });
const WorkflowRunResumedEventSchema = z.object({ ...base, type: z.literal("workflow_run_resumed") });

/** The node has its input and begins (before its first attempt, approval, loop iteration or combine). */
const NodeStartedEventSchema = z.object({
  ...activation,
  type: z.literal("node_started"),
  kind: NodeKindSchema,
  input: WorkflowValueSchema,
  /** Activation IDs of the sources whose values make up `input`, in merge order; `[]` for the start node. */
  sources: z.array(z.string()),
});

const NodeWaitingApprovalEventSchema = z.object({
  ...activation,
  type: z.literal("node_waiting_approval"),
});
const NodeApprovedEventSchema = z.object({ ...activation, type: z.literal("node_approved") });

/** An attempt is due but waits for a slot: at most `limit` attempts of its kind run at once in a run. */
const AttemptQueuedEventSchema = z.object({
  ...activation,
  type: z.literal("attempt_queued"),
  /** The attempt that will start when a slot frees. */
  attempt: z.number().int().min(1),
  reason: z.enum(["agent_limit", "python_limit"]),
  limit: z.number().int().min(1),
});

const AttemptStartedEventSchema = z.object({
  ...attempt,
  type: z.literal("attempt_started"),
  /** Attempts allowed in this round of automatic retries (`Retry.max_attempts` or the default). */
  max_attempts: z.number().int().min(1),
  timeout_ms: z.number().nullable(),
});

const AttemptFailedEventSchema = z.object({
  ...attempt,
  type: z.literal("attempt_failed"),
  error: NodeErrorSchema,
  phase: z.enum(["node", "conditions"]),
  /** Another attempt follows automatically after `retry_delay_ms`. */
  will_retry: z.boolean(),
  retry_delay_ms: z.number().nullable(),
});

const NodeCompletedEventSchema = z.object({
  ...activation,
  type: z.literal("node_completed"),
  kind: NodeKindSchema,
  /** The attempt that produced the value; `null` for loops and joins without `combine`. */
  attempt: z.number().int().min(1).nullable(),
  value: WorkflowValueSchema,
});

/** The outcome of a node's conditional outgoing edges (only for nodes that have some). */
const EdgesDecidedEventSchema = z.object({
  ...activation,
  type: z.literal("edges_decided"),
  /** Edge keys (`source->target`) that pass the value on. */
  passed: z.array(z.string()),
  /** Conditional edge keys that do not. */
  blocked: z.array(z.string()),
});

const NodeFailedEventSchema = z.object({
  ...activation,
  type: z.literal("node_failed"),
  kind: NodeKindSchema,
  attempt: z.number().int().min(1).nullable(),
  error: NodeErrorSchema,
  /** What a manual retry would redo. */
  phase: FailurePhaseSchema,
});

const NodeAwaitingRetryEventSchema = z.object({
  ...activation,
  type: z.literal("node_awaiting_retry"),
  phase: FailurePhaseSchema,
  error_class: z.string(),
});

const NodeRetriedEventSchema = z.object({
  ...activation,
  type: z.literal("node_retried"),
  phase: FailurePhaseSchema,
});

const NodeSkippedEventSchema = z.object({
  ...activation,
  type: z.literal("node_skipped"),
  reason: SkipReasonSchema,
  /** The note given to `skipNode`, or `null`. */
  note: z.string().nullable(),
  /** The value `skipNode` passed downstream in the node's place, or `null` (downstream sees a skip). */
  value: WorkflowValueSchema.nullable(),
});

const NodeCancelledEventSchema = z.object({
  ...activation,
  type: z.literal("node_cancelled"),
  reason: NodeCancelReasonSchema,
  /** The attempt that was running, or `null`. */
  attempt: z.number().int().min(1).nullable(),
});

const LoopIterationEventSchema = z.object({
  ...activation,
  type: z.literal("loop_iteration"),
  /** The iteration that starts now (`iteration` is the loop node's own, always 1). */
  loop_iteration: z.number().int().min(1),
  max_iterations: z.number().int().min(1),
  /** `true` when `retryNode` reruns an iteration after `loop_no_value`. */
  rerun: z.boolean(),
});

const LoopUntilEventSchema = z.object({
  ...activation,
  type: z.literal("loop_until"),
  loop_iteration: z.number().int().min(1),
  /** What `until` returned: `true` ends the loop. */
  stop: z.boolean(),
  /** The loop ends because the iteration limit was reached with `stop` false. */
  exhausted: z.boolean(),
});

const EmitEventSchema = z.object({ ...attempt, type: z.literal("emit"), text: z.string() });

/**
 * A `ctx.ask` (1–5 questions in one dialog). `questions` is the full payload for front ends that answer it;
 * the event log keeps only `summary` in the event and the questions beside it (see `@icode/workflow-records`),
 * as the spec wants `events.jsonl` to hold a summary rather than the full questions.
 */
const QuestionEventSchema = z.object({
  ...attempt,
  type: z.literal("question"),
  /** Numbers the asks of one attempt: 1, 2, … */
  question_id: z.number().int().min(1),
  /** Names the ask in the run: `<activation_id>/<attempt>/<question_id>` (`askIdOf`). */
  ask_id: z.string(),
  /** The questions, cut to 512 characters. */
  summary: z.string(),
  questions: z.array(QuestionSchema),
});

/** How an ask ended: answered, unavailable (no front end can ask), cancelled (its attempt ended), or
 * failed (the host's ask handler failed; the attempt fails with `ask_handler_failed`). */
const AnswerEventSchema = z.object({
  ...attempt,
  type: z.literal("answer"),
  question_id: z.number().int().min(1),
  ask_id: z.string(),
  status: z.enum(["answered", "unavailable", "cancelled", "failed"]),
  /** The answers, cut to 512 characters. */
  summary: z.string(),
});

const AgentActivityEventSchema = z.object({
  ...attempt,
  type: z.literal("agent_activity"),
  activity: AgentActivitySchema,
});

export const EngineEventSchema = z.discriminatedUnion("type", [
  WorkflowRunStartEventSchema,
  WorkflowRunEndEventSchema,
  WorkflowRunPausedEventSchema,
  WorkflowRunResumedEventSchema,
  NodeStartedEventSchema,
  NodeWaitingApprovalEventSchema,
  NodeApprovedEventSchema,
  AttemptQueuedEventSchema,
  AttemptStartedEventSchema,
  AttemptFailedEventSchema,
  NodeCompletedEventSchema,
  EdgesDecidedEventSchema,
  NodeFailedEventSchema,
  NodeAwaitingRetryEventSchema,
  NodeRetriedEventSchema,
  NodeSkippedEventSchema,
  NodeCancelledEventSchema,
  LoopIterationEventSchema,
  LoopUntilEventSchema,
  EmitEventSchema,
  QuestionEventSchema,
  AnswerEventSchema,
  AgentActivityEventSchema,
  ...HOST_EVENT_SCHEMAS,
]);
export type EngineEvent = z.infer<typeof EngineEventSchema>;
export type EngineEventType = EngineEvent["type"];
/** Every event type, in schema order. */
export const ENGINE_EVENT_TYPES = EngineEventSchema.options.map(
  (o) => o.shape.type.value,
) as EngineEventType[];

/** For `new EventEmitter<EngineEventMap>()`: each event type maps to the listener arguments `[event]`. */
export type EngineEventMap = { [E in EngineEvent as E["type"]]: [E] };

/** The event of a given type. */
export type EngineEventOf<T extends EngineEventType> = Extract<EngineEvent, { type: T }>;

/**
 * Where events go. `write` is called synchronously, in order; throwing ends the run with `storage_failed`
 * (the run does not crash). A buffering sink reports a failed background write by throwing from its next
 * `write`, or from `flush`, which the run awaits after its end event before settling its result.
 */
export interface RecordSink {
  write(event: EngineEvent): void;
  /**
   * The run's end event after an earlier `write` failed: a sink whose failures are sticky (it refuses every
   * write after one failed) gets one more try here, so that a log that can still be written records the true
   * outcome (`storage_failed`).
   */
  writeLast?(event: EngineEvent): void;
  flush?(): Promise<void>;
}
