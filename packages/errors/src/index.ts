/**
 * @module @icode/workflow-errors
 * The two kinds of failure shared by the iCode workflow packages: diagnostics (data with codes, returned)
 * and `WorkflowError` (a failed operation, thrown); and the validate report that carries diagnostics.
 *
 * @example
 * import { diagnostic } from "@icode/workflow-errors";
 * diagnostic({ code: "path_not_found", stage: "resolve", message: "nothing exists at ./x.py" });
 * // → { severity: "error", code: "path_not_found", stage: "resolve", file: null, line: null, … }
 */
export {
  type Diagnostic,
  type DiagnosticNote,
  DiagnosticNoteSchema,
  DiagnosticSchema,
  type Severity,
  SeveritySchema,
  type Stage,
  StageSchema,
} from "./diagnostic";
export { isWorkflowError, WorkflowError } from "./error";
export { diagnostic } from "./make";
export { STAGES } from "./stages";
export {
  type StageStatus,
  StageStatusSchema,
  type ValidateReport,
  ValidateReportSchema,
} from "./validate-report";
