import {
  FinishedRunSchema,
  PIPELINE_RUN_CODES,
  PIPELINE_STORE_CODES,
  RejectedRunSchema,
  RUN_REJECTION_CODES,
  ValidateReportSchema,
} from "@icode/workflow-engine";
import { z } from "zod";

/**
 * Every code of the CLI's error object: the run rejections of `icode workflow run`, the pipeline store's
 * refusals of `icode pipeline …`, and the CLI's own. `docs/errors.md` has a heading for each ("CLI error
 * codes", "Run rejection codes", "Pipeline codes").
 */
export const CLI_ERROR_CODES = [
  ...RUN_REJECTION_CODES,
  ...PIPELINE_STORE_CODES,
  ...PIPELINE_RUN_CODES,
  /** The command line is wrong (exit 2). */
  "usage_error",
  /** `--input-file` names something that cannot be read as UTF-8 text. */
  "input_file_unreadable",
  /** `trajectory export --out` cannot be written. */
  "output_write_failed",
  /** `icode runs show|logs`: no recorded run has that ID. */
  "run_not_found",
  /** A record could not be read back (`icode runs …`, `icode sessions list`, `trajectory export`). */
  "record_invalid",
  /** An ID that is not a session or run ID. */
  "invalid_id",
  /** `icode agents` / `icode models`: the working directory was deleted (exit 1). */
  "cwd_missing",
  /** A defect of icode itself. */
  "internal_error",
] as const;
const CliErrorCodeSchema = z.enum(CLI_ERROR_CODES);
export type CliErrorCode = z.infer<typeof CliErrorCodeSchema>;

/**
 * The error object of `--json` mode: one line on stdout for every outcome that is not a result (usage
 * errors, run rejections, failed commands), and the same line on stderr for run rejections (the reference
 * puts error JSON there). `session_id` and `diagnostics` come with run rejections.
 */
export const CliErrorJsonSchema = z.strictObject({
  error: z.strictObject({
    code: CliErrorCodeSchema,
    message: z.string(),
    hint: z.string().nullable(),
    session_id: RejectedRunSchema.shape.session_id.optional(),
    diagnostics: RejectedRunSchema.shape.diagnostics.optional(),
    /** `pipeline_definition_invalid`: what validation found, as in the validate report. */
    problems: ValidateReportSchema.shape.diagnostics.optional(),
  }),
});
export type CliErrorJson = z.infer<typeof CliErrorJsonSchema>;

/**
 * The stderr line of a run that finished other than `completed` in `--json` mode (the reference's "error
 * JSON"); the result itself is on stdout.
 */
export const RunFailureJsonSchema = z.strictObject({
  error: z.strictObject({
    outcome: FinishedRunSchema.shape.outcome,
    reason: FinishedRunSchema.shape.reason,
    node_id: FinishedRunSchema.shape.node_id,
    message: FinishedRunSchema.shape.error,
    error_class: FinishedRunSchema.shape.error_class,
  }),
});
export type RunFailureJson = z.infer<typeof RunFailureJsonSchema>;
