import { DiagnosticSchema } from "@icode/workflow-errors";
import { CapturedTextSchema } from "@icode/workflow-graph";
import { RunDiagnosticsSchema } from "@icode/workflow-records";
import { RunEndSchema } from "@icode/workflow-scheduler";
import { z } from "zod";

/** Why a run was refused before it was accepted (nothing was recorded, no hook fired). */
export const RUN_REJECTION_CODES = [
  "request_invalid",
  "input_too_large",
  "workflow_not_found",
  "workflow_unreadable",
  "session_not_found",
  "session_invalid",
  "spec_changed",
  "validation_failed",
  "model_unresolvable",
  "model_ambiguous",
  "trust_required",
  "trust_write_failed",
  "source_changed",
  "storage_failed",
  "deadline_exceeded",
  "interrupted",
  "cancelled",
] as const;
export const RunRejectionCodeSchema = z.enum(RUN_REJECTION_CODES);
export type RunRejectionCode = z.infer<typeof RunRejectionCodeSchema>;

/**
 * A run that was accepted and has ended, whatever its outcome: the run's end (`RunEndSchema`, the same fields
 * as the `workflow_run_end` event) with the session, the time it took and the run-level diagnostics.
 */
export const FinishedRunSchema = RunEndSchema.extend({
  status: z.literal("finished"),
  session_id: z.string(),
  run_id: z.string(),
  /** Seconds from the request to the end, preparation included. */
  duration: z.number(),
  /** Output that belongs to no node (the run JSON's `diagnostics`), or `{ error }` when it was not kept. */
  diagnostics: RunDiagnosticsSchema,
  /** Where the store keeps the run (the file store: its folder), or `null`. */
  location: z.string().nullable(),
});

export const RejectedRunSchema = z.object({
  status: z.literal("rejected"),
  /** The ID the run would have had; nothing was recorded under it. */
  run_id: z.string(),
  code: RunRejectionCodeSchema,
  message: z.string(),
  hint: z.string().nullable(),
  session_id: z.string().nullable(),
  duration: z.number(),
  /** Problems found while loading (the validate stages), when that is why. */
  diagnostics: z.array(DiagnosticSchema),
  load_output: CapturedTextSchema.nullable(),
});

/** What a run's `result` settles with: a finished run (any outcome) or a refusal. */
export const RunReportSchema = z.discriminatedUnion("status", [FinishedRunSchema, RejectedRunSchema]);
export type RunReport = z.infer<typeof RunReportSchema>;
export type FinishedRun = z.infer<typeof FinishedRunSchema>;
export type RejectedRun = z.infer<typeof RejectedRunSchema>;

/** A refusal before the run was accepted: the code, a message for people, and what else is known. */
export interface Refusal {
  readonly code: RunRejectionCode;
  readonly message: string;
  readonly hint?: string | null;
  readonly diagnostics?: RejectedRun["diagnostics"];
  readonly loadOutput?: RejectedRun["load_output"];
}
