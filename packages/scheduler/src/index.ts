/**
 * @module @icode/workflow-scheduler
 * The pure scheduling core of iCode workflows: it executes one run of a Definition (activations, input
 * merging, skips, switch/when edges, joins, loops, retries, timeouts, concurrency, failure policies,
 * cancellation) with injected executors, clock and record sink, and reports every state change as one
 * typed event.
 *
 * @example
 * import { createVirtualClock, startRun } from "@icode/workflow-scheduler";
 * const run = startRun({
 *   runId: "0123456789abcdef0123456789abcdef",
 *   definition, // a Definition from @icode/workflow-graph
 *   input: { text: "Hello", data: null },
 *   clock: createVirtualClock(),
 *   sink: { write: (event) => console.log(event.type) },
 *   executors: { runPython: async ({ input }) => ({ status: "completed", value: input }) },
 * });
 * const result = await run.result;
 * // → { outcome: "completed", reason: "", outputs: [{ node_id: "echo", activation_id: "echo@iter#1", text: "Hello", data: null }], … }
 */
export type { Clock, Timer } from "./clock";
export {
  CANCEL_REASONS,
  type CancelReason,
  CancelReasonSchema,
  CONTROL_ERROR_CODES,
  type ControlErrorCode,
  ControlErrorCodeSchema,
  FAILURE_PHASES,
  FAILURE_POLICIES,
  type FailurePhase,
  FailurePhaseSchema,
  type FailurePolicy,
  FailurePolicySchema,
  NEVER_RETRIED_CLASSES,
  NODE_CANCEL_REASONS,
  type NodeCancelReason,
  NodeCancelReasonSchema,
  RUN_OUTCOMES,
  type RunOutcome,
  RunOutcomeSchema,
  SCHEDULER_ERROR_CLASSES,
  SKIP_REASONS,
  type SkipReason,
  SkipReasonSchema,
} from "./codes";
export {
  isSchedulerError,
  SCHEDULER_ERROR_CODES,
  SchedulerError,
  type SchedulerErrorCode,
  SchedulerErrorCodeSchema,
} from "./errors";
export {
  AgentActivityEventSchema,
  AnswerEventSchema,
  AttemptFailedEventSchema,
  AttemptStartedEventSchema,
  EdgesDecidedEventSchema,
  EmitEventSchema,
  ENGINE_EVENT_TYPES,
  type EngineEvent,
  type EngineEventMap,
  type EngineEventOf,
  EngineEventSchema,
  type EngineEventType,
  LoopIterationEventSchema,
  LoopUntilEventSchema,
  NodeApprovedEventSchema,
  NodeAwaitingRetryEventSchema,
  NodeCancelledEventSchema,
  NodeCompletedEventSchema,
  NodeFailedEventSchema,
  NodeRetriedEventSchema,
  NodeSkippedEventSchema,
  NodeStartedEventSchema,
  NodeWaitingApprovalEventSchema,
  QuestionEventSchema,
  type RecordSink,
  WorkflowRunEndEventSchema,
  WorkflowRunPausedEventSchema,
  WorkflowRunResumedEventSchema,
  WorkflowRunStartEventSchema,
} from "./events";
export {
  AGENT_ACTIVITY_KINDS,
  type AgentActivityKind,
  AgentActivityKindSchema,
  type AgentAttemptRequest,
  type AskHandler,
  type AttemptIO,
  type AttemptResult,
  AttemptResultSchema,
  type CallIO,
  type CombineRequest,
  type CombineResult,
  CombineResultSchema,
  type ConditionBatch,
  ConditionBatchSchema,
  type ConditionsRequest,
  type ConditionsResult,
  ConditionsResultSchema,
  type EdgeDecisions,
  EdgeDecisionsSchema,
  type Executors,
  type NodeError,
  NodeErrorSchema,
  type PythonAttemptRequest,
  type UntilRequest,
  type UntilResult,
  UntilResultSchema,
} from "./executor";
export { DEFAULT_AGENT_RETRY, DEFAULT_PYTHON_RETRY } from "./graph-index";
export {
  type Answer,
  AnswerSchema,
  type AskRequest,
  AskRequestSchema,
  type AskResponse,
  AskResponseSchema,
  cutText,
  type Option,
  OptionSchema,
  type Question,
  QuestionSchema,
  SUMMARY_LIMIT,
  summarizeQuestions,
  summarizeResponse,
} from "./interaction";
export {
  COMBINE_INPUT_LIMIT_BYTES,
  COMBINE_TIMEOUT_MS,
  CONDITION_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_AGENTS,
  UNTIL_TIMEOUT_MS,
} from "./limits";
export {
  ACTIVATION_STATES,
  type ActivationState,
  ActivationStateSchema,
  type ControlResult,
  ControlResultSchema,
  type RunResult,
  RunResultSchema,
  type RunSnapshot,
  RunSnapshotSchema,
} from "./result";
export { type RunOptions, type SkipOptions, startRun, type WorkflowRun } from "./run";
export {
  type RunOutput,
  RunOutputSchema,
  type SourceValue,
  SourceValueSchema,
  type WorkflowValue,
  WorkflowValueSchema,
} from "./value";
export { createVirtualClock, type VirtualClock } from "./virtual-clock";
