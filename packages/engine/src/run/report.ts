import { DiagnosticSchema } from "@icode/workflow-errors";
import { RunOutcomeSchema } from "@icode/workflow-scheduler";
import { z } from "zod";

/** Why a run was refused before it was accepted (nothing was recorded, no hook fired). */
export const RUN_REJECTION_CODES = [
  "workflow_not_found",
  "session_not_found",
  "session_invalid",
  "spec_changed",
  "validation_failed",
  "trust_required",
  "trust_write_failed",
  "source_changed",
  "storage_failed",
  "deadline_exceeded",
  "interrupted",
] as const;
export const RunRejectionCodeSchema = z.enum(RUN_REJECTION_CODES);
export type RunRejectionCode = z.infer<typeof RunRejectionCodeSchema>;

export const RunOutputItemSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  text: z.string(),
  data: z.json(),
});

/** The run's diagnostics object of the spec's JSON output, or `{ error }` when they could not be kept. */
export const RunDiagnosticsReportSchema = z.union([
  z.object({
    load: z.object({ text: z.string(), truncated: z.boolean() }),
    native: z.object({ text: z.string(), dropped_bytes: z.number().int().min(0) }),
  }),
  z.object({ error: z.string() }),
]);

export const FinishedRunSchema = z.object({
  status: z.literal("finished"),
  session_id: z.string(),
  run_id: z.string(),
  outcome: RunOutcomeSchema,
  reason: z.string(),
  node_id: z.string(),
  error: z.string(),
  /** The class of the failure (`exception`, `timeout`, `ask_unavailable`, `loop_no_value`, …), or `null`. */
  error_class: z.string().nullable(),
  duration: z.number(),
  diagnostics: RunDiagnosticsReportSchema,
  outputs: z.array(RunOutputItemSchema),
  /** The run's record folder. */
  run_dir: z.string(),
});

export const RejectedRunSchema = z.object({
  status: z.literal("rejected"),
  code: RunRejectionCodeSchema,
  message: z.string(),
  hint: z.string().nullable(),
  session_id: z.string().nullable(),
  duration: z.number(),
  /** Problems found while previewing (the validate stages), when that is why. */
  diagnostics: z.array(DiagnosticSchema),
  load_output: z.object({ text: z.string(), truncated: z.boolean() }).nullable(),
});

/** What `engine.run(...).result` settles with: a finished run (any outcome) or a refusal. */
export const RunReportSchema = z.discriminatedUnion("status", [FinishedRunSchema, RejectedRunSchema]);
export type RunReport = z.infer<typeof RunReportSchema>;
export type FinishedRun = z.infer<typeof FinishedRunSchema>;
export type RejectedRun = z.infer<typeof RejectedRunSchema>;

export function rejected(
  code: RunRejectionCode,
  message: string,
  extra: Partial<Omit<RejectedRun, "status" | "code" | "message">> & { duration: number },
): RejectedRun {
  return {
    status: "rejected",
    code,
    message,
    hint: extra.hint ?? null,
    session_id: extra.session_id ?? null,
    duration: extra.duration,
    diagnostics: extra.diagnostics ?? [],
    load_output: extra.load_output ?? null,
  };
}
