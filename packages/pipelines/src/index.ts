/**
 * @module @icode/pipelines
 * JSON pipelines: the definition (a zod schema, published as `schemas/pipeline.schema.json`), its
 * compiler-like validation into the `icode workflow validate` report, prompt templates, structured
 * handoffs, the built-in pipelines, the store that keeps definitions (draft → published, revisions,
 * locks) and runs (node states, leases, control commands, events, attempts), and the run driver (state
 * machines, failure policies, approvals, supervision, crash resume) over an injected `NodeExecutor`. Runs no
 * agent itself and loads no model or protocol SDK.
 *
 * @example
 * import { openSqlitePipelineStore, renderPrompt, validatePipeline } from "@icode/pipelines";
 * const report = validatePipeline(text, "/work/review.json", { env });
 * // → { version: 1, status: "fail", diagnostics: [{ code: "pipeline_unknown_dependency", pointer: "/nodes/1/depends_on/0", line: 9, … }], … }
 * const store = openSqlitePipelineStore({ chrysHome });
 * const draft = await store.importDefinition(text);
 * await store.publishDefinition(draft.id, { expected_revision: draft.revision });
 * renderPrompt("Fix {{upstream.review.summary}}", { task, node: { depends_on: ["review"] }, upstream });
 * const run = await store.createRun({ definition_id: draft.id, task_input: "fix the build" });
 * await drivePipelineRun({ store, runId: run.run_id, executor, owner: "cli-1", runDir, launchCwd });
 * // → { stop: "converged", run: { state: "succeeded", … }, … }; from another process:
 * await controlPipelineRun(store, run.run_id, { action: "pause" }, { owner: "cli-2" });
 */
export {
  type BuiltinPipeline,
  builtinPipelines,
  builtinPipelinesDir,
  installBuiltinPipelines,
} from "./builtins";
export {
  PIPELINE_CODES,
  PIPELINE_RUN_CODES,
  PIPELINE_STORE_CODES,
  type PipelineCode,
  PipelineCodeSchema,
  PipelineError,
  type PipelineRunCode,
  PipelineRunCodeSchema,
  type PipelineStoreCode,
  PipelineStoreCodeSchema,
} from "./codes";
export {
  EFFORTS,
  FAILURE_POLICIES,
  type FailurePolicy,
  NODE_ID_PATTERN,
  PERMISSION_MODES,
  type PipelineDefinition,
  type PipelineDefinitionInput,
  PipelineDefinitionSchema,
  type PipelineNode,
  type PipelineNodeInput,
  PipelineNodeSchema,
  pipelineDefinitionSchema,
  RUNTIMES,
  type Runtime,
} from "./definition";
export {
  checkHandoff,
  type Handoff,
  type HandoffCheck,
  type HandoffProblem,
  MAX_HANDOFF_PROBLEMS,
} from "./handoff";
export { type HandoffFromText, parseHandoffFromText } from "./handoff-text";
export { type JsonPath, toPointer } from "./json-pointer";
export { pipelineJsonSchema } from "./json-schema";
export {
  DEFAULT_PIPELINE_LIMITS,
  LIMIT_ENV,
  type LimitWarning,
  MAX_LIMIT_OVERRIDE,
  type PipelineLimits,
  PipelineLimitsSchema,
  pipelineLimits,
} from "./limits";
export {
  checkOutputSchema,
  DEFAULT_OUTPUT_SCHEMA,
  declaredFields,
  handoffSchemaOf,
  JSON_TYPES,
  type JsonType,
  OUTPUT_SCHEMA_KEYWORDS,
  type OutputSchema,
  type OutputSchemaProblem,
} from "./output-schema";
export {
  type ControlDecision,
  type ControlOptions,
  type ControlPlan,
  type ControlResult,
  controlPipelineRun,
  planControl,
  type RunSnapshot,
  skipHandoff,
} from "./run/control";
export { type DriveOptions, type DriveResult, type DriveStop, drivePipelineRun } from "./run/driver";
export {
  ATTEMPT_STATUSES,
  type AttemptEnd,
  type AttemptStart,
  type AttemptStatus,
  type NodeAttempt,
  NodeAttemptSchema,
  type PipelineEvent,
  PipelineEventSchema,
  type StoredPipelineEvent,
  StoredPipelineEventSchema,
  type SupervisorDecision,
  SupervisorDecisionSchema,
} from "./run/events";
export {
  LAUNCH_PERMISSION_MODES,
  type LaunchPermissionMode,
  type NodeAttemptRecord,
  NodeAttemptRecordSchema,
  type NodeExecutor,
  type NodeOutcome,
  type NodeRunEvent,
  NodeRunEventSchema,
  type NodeRunRequest,
} from "./run/executor";
export { attemptDir, EVENTS_FILE } from "./run/run-records";
export {
  DEFAULT_SUPERVISION_BUDGET,
  defaultSupervisor,
  type SupervisionContext,
  type Supervisor,
} from "./run/supervisor";
export {
  CONTROL_ACTIONS,
  type ControlAction,
  DRIVER_NODE_TRANSITIONS,
  DRIVER_RUN_TRANSITIONS,
  NODE_TRANSITIONS,
  type NodeEffect,
  RUN_TRANSITIONS,
  type RunEffect,
} from "./run/transitions";
export { MANAGED_DEFINITION_ID, RUN_ID, USER_DEFINITION_ID } from "./store/ids";
export { checkRunnable, type Runnable } from "./store/lifecycle";
export {
  COMMAND_STATES,
  type Command,
  type CommandResult,
  CommandResultSchema,
  CommandSchema,
  DEFINITION_SOURCES,
  DEFINITION_STATUSES,
  type Lease,
  type LeaseResult,
  LeaseSchema,
  NODE_STATES,
  type NodePatch,
  NodePatchSchema,
  type NodeState,
  type PipelineRun,
  PipelineRunSchema,
  RUN_STATES,
  type RunNode,
  RunNodeSchema,
  type RunPatch,
  RunPatchSchema,
  type RunState,
  type StoredCommand,
  StoredCommandSchema,
  type StoredDefinition,
  StoredDefinitionSchema,
  TERMINAL_RUN_STATES,
} from "./store/records";
export {
  openSqlitePipelineStore,
  PIPELINE_DB_FILE,
  pipelineStorePath,
  type SqliteStoreOptions,
} from "./store/sqlite/sqlite-store";
export type {
  CreateRunInput,
  DefinitionFilter,
  EventFilter,
  ExpectedRevision,
  ManagedDefinition,
  PipelineStore,
  PublishOptions,
  RunFilter,
  RunUpdate,
} from "./store/store";
export { type PromptContext, renderPrompt, scanTemplate, type TemplateVariable } from "./template";
export {
  type PipelineTraceEvent,
  type PipelineTrajectory,
  PipelineTrajectorySchema,
  pipelinePerfetto,
  pipelineTrajectory,
} from "./trajectory";
export type { PipelineBindings } from "./validate/bindings";
export {
  MAX_PIPELINE_BYTES,
  type ParsedPipeline,
  parsePipeline,
  readPipelineFile,
  type ValidatePipelineOptions,
  validatePipeline,
} from "./validate/validate";
