/**
 * @module @icode/workflow-scheduler
 * The pure scheduling core: it executes one run of a Definition (activations, merges, skips, switch/when
 * edges, joins, loops, retries, timeouts, concurrency, failure policies, asks, cancellation) with injected
 * executors, clock and sink, and reports every state change as one typed event. Test helpers (fake
 * executors, a virtual-time driver) are in `@icode/workflow-scheduler/testing`.
 *
 * @example
 * import { createVirtualClock, startRun } from "@icode/workflow-scheduler";
 * const run = startRun({ runId, definition, input: { text: "Hello", data: null }, clock: createVirtualClock(),
 *   sink: { write: (event) => console.log(event.type) },
 *   executors: { runPython: async ({ input }) => ({ status: "completed", value: input }) } });
 * await run.result; // → { outcome: "completed", reason: "", outputs: [{ node_id: "echo", text: "Hello", … }], … }
 */
export { type AgentActivity, AgentActivitySchema, type TokenUsage, TokenUsageSchema } from "./activity";
export type { Clock, Timer } from "./clock";
export {
  CANCEL_REASONS,
  type CancelReason,
  CONTROL_ERROR_CODES,
  type ControlErrorCode,
  FAILURE_PHASES,
  FAILURE_POLICIES,
  type FailurePolicy,
  FailurePolicySchema,
  NEVER_RETRIED_CLASSES,
  NODE_CANCEL_REASONS,
  RUN_OUTCOMES,
  type RunOutcome,
  RunOutcomeSchema,
  SCHEDULER_ERROR_CLASSES,
  SKIP_REASONS,
} from "./codes";
export { isSchedulerError, SCHEDULER_ERROR_CODES, SchedulerError, type SchedulerErrorCode } from "./errors";
export {
  ENGINE_EVENT_TYPES,
  type EngineEvent,
  type EngineEventMap,
  type EngineEventOf,
  EngineEventSchema,
  type EngineEventType,
  type RecordSink,
} from "./events";
export type {
  AgentAttemptRequest,
  AskHandler,
  AttemptIO,
  AttemptResult,
  CallIO,
  CombineResult,
  ConditionsResult,
  Executors,
  NodeError,
  PythonAttemptRequest,
  UntilResult,
} from "./executor";
export { NodeErrorSchema } from "./executor";
export { DEFAULT_AGENT_RETRY, DEFAULT_PYTHON_RETRY } from "./graph-index";
export {
  type Answer,
  AnswerSchema,
  type AskRequest,
  type AskResponse,
  checkAnswers,
  cutText,
  type Option,
  type PendingAsk,
  PendingAskSchema,
  type Question,
  QuestionSchema,
  SUMMARY_LIMIT,
  summarizeQuestions,
} from "./interaction";
export { CONDITION_TIMEOUT_MS, DEFAULT_MAX_CONCURRENT_AGENTS } from "./limits";
export type { RunOptions, SkipOptions, WorkflowRun } from "./options";
export {
  type ControlResult,
  ControlResultSchema,
  type RunEnd,
  RunEndSchema,
  type RunResult,
  RunResultSchema,
  type RunSnapshot,
  RunSnapshotSchema,
} from "./result";
export { startRun } from "./run";
export { type ActivationView, type RunInspection, RunInspectionSchema, RunView } from "./run-view";
export { type RunOutput, RunOutputSchema, type WorkflowValue, WorkflowValueSchema } from "./value";
export { createVirtualClock, type VirtualClock } from "./virtual-clock";
