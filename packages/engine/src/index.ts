/**
 * @module @icode/workflow-engine
 * The iCode workflow engine: list, validate, preview, trust and run workflows, and drive runs from any front
 * end — a registry of runs, inspection, event subscriptions from any sequence number, answers to questions
 * and control — with every shape a zod schema a server can send.
 *
 * @example
 * import { createEngine } from "@icode/workflow-engine";
 * const engine = createEngine({ cwd: process.cwd(), env: process.env });
 * const run = engine.run({ workflowId: "echo", input: "Hello" });
 * run.events.on("node_completed", (e) => console.log(e.node_id));
 * const report = await run.result; // → { status: "finished", outcome: "completed", outputs: [{ text: "Hello", … }], … }
 * await engine.close();
 */

export {
  type Command as PipelineCommand,
  CommandResultSchema as PipelineCommandResultSchema,
  type ControlResult as PipelineControlResult,
  DEFINITION_SOURCES,
  DEFINITION_STATUSES,
  type DefinitionFilter,
  type DriveResult,
  type ExpectedRevision,
  type NodeExecutor,
  PIPELINE_RUN_CODES,
  PIPELINE_STORE_CODES,
  type PipelineRun,
  PipelineRunSchema,
  type PipelineStoreCode,
  type RunNode,
  type StoredDefinition,
  StoredDefinitionSchema,
  type StoredPipelineEvent,
  StoredPipelineEventSchema,
} from "@icode/pipelines";
export type { WorkerWarning } from "@icode/python-bridge";
export type { Diagnostic } from "@icode/workflow-errors";
export type {
  Answer,
  AskHandler,
  AskRequest,
  AskResponse,
  EngineEvent,
  Option,
  Question,
  RunInspection,
  RunOutcome,
  SkipOptions,
} from "@icode/workflow-scheduler";
export { RunInspectionSchema } from "@icode/workflow-scheduler";
export {
  type AgentListing,
  AgentListingSchema,
  formatContextTokens,
  type ListProfilesOptions,
  listAgentsFor,
  listModelsFor,
  type ModelListing,
  ModelListingSchema,
} from "./agents/listings";
export { ERROR_CODES } from "./codes";
export type { EngineOptions } from "./context";
export { createEngine, type Engine } from "./engine";
export type { RunDetails, RunLogs, RunSummary, SessionSummary } from "./history";
export {
  RunDetailsSchema,
  type RunHistory,
  RunLogsSchema,
  RunSummarySchema,
  SessionSummarySchema,
} from "./history";
export { type ListedWorkflow, ListedWorkflowSchema, type ListResult, listWorkflowsFor } from "./list";
export type { ExecutorIO, FoundWorkflow, PreparedWorkflow, PrepareOptions, WorkflowLoader } from "./loader";
export {
  type EnginePipelines,
  type PipelineCatalog,
  type PipelineSource,
  pipelineCatalogFor,
} from "./pipelines/definitions";
export { pipelinesFor } from "./pipelines/for";
export {
  type DriveRunOptions,
  type PipelineRunInspection,
  PipelineRunInspectionSchema,
  type PipelineRunsApi,
  type PipelineSubscription,
  pipelineRunDir,
  type StartPipelineRun,
} from "./pipelines/runs";
export type { WorkflowPreview } from "./preview";
export { type RunCallbacks, type RunRequest, RunRequestSchema } from "./request";
export type { FinishedRun, RejectedRun, RunRejectionCode, RunReport } from "./run/report";
export { FinishedRunSchema, RejectedRunSchema, RUN_REJECTION_CODES, RunReportSchema } from "./run/report";
export {
  type RunEventMap,
  type RunHandle,
  type RunStatus,
  RunStatusSchema,
  type Subscription,
} from "./run/run-handle";
export { type PrestartedValidation, prestartValidation } from "./validate/prestart";
export { type ValidateReport, ValidateReportSchema } from "./validate/report";
export { type ValidateOptions, validateWorkflowFor } from "./validate/validate";
export { ENGINE_VERSION } from "./version";
