// The report schema is shared with `@icode/pipelines` (JSON pipelines are validated into the same shape), so
// it lives in `@icode/workflow-errors`; the engine keeps exporting it from here.
export {
  type StageStatus,
  type ValidateReport,
  ValidateReportSchema,
} from "@icode/workflow-errors";
