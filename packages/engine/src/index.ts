/**
 * @module @icode/workflow-engine
 * The iCode workflow engine: list, validate, preview, trust and run Python-authored workflows.
 *
 * @example
 * import { createEngine } from "@icode/workflow-engine";
 * const engine = createEngine({ cwd: process.cwd(), env: process.env });
 * const run = engine.run({ workflowId: "echo", input: "Hello" });
 * run.events.on("node_completed", (e) => console.log(e.node_id));
 * const report = await run.result;
 * // → { status: "finished", outcome: "completed", outputs: [{ node_id: "echo", text: "Hello", … }], … }
 * await engine.close();
 */

export type { WorkerWarning } from "@icode/python-bridge";
export type { Diagnostic } from "@icode/workflow-errors";
export type { EngineEvent, RunOutcome } from "@icode/workflow-scheduler";
export type { EngineOptions } from "./context";
export { createEngine, type Engine } from "./engine";
export { type ListedWorkflow, ListedWorkflowSchema, type ListResult, listWorkflowsFor } from "./list";
export type { WorkflowPreview } from "./preview";
export {
  type FinishedRun,
  FinishedRunSchema,
  type RejectedRun,
  RejectedRunSchema,
  RUN_REJECTION_CODES,
  type RunRejectionCode,
  type RunReport,
  RunReportSchema,
} from "./run/report";
export type { ActiveRun, RunEvents, RunNotice, RunRequest } from "./run/run-workflow";
export { type PrestartedValidation, prestartValidation } from "./validate/prestart";
export { type ValidateReport, ValidateReportSchema } from "./validate/report";
export { type ValidateOptions, validateWorkflowFor } from "./validate/validate";
