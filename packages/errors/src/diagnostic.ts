import { z } from "zod";
import { STAGES } from "./stages";

export const StageSchema = z.enum(STAGES);
export type Stage = z.infer<typeof StageSchema>;

export const SeveritySchema = z.enum(["error", "warning"]);
export type Severity = z.infer<typeof SeveritySchema>;

export const DiagnosticNoteSchema = z.object({
  message: z.string(),
  file: z.string().nullable(),
  line: z.number().int().min(1).nullable(),
});
export type DiagnosticNote = z.infer<typeof DiagnosticNoteSchema>;

/**
 * One problem found while checking a workflow: data, never thrown. The shape is the spec's `diagnostics[]`
 * item of the validate JSON report; `code` is a string here because each package owns its closed list of
 * codes (`METADATA_CODES`, `DISCOVERY_CODES`, …) and the engine unites them.
 */
export const DiagnosticSchema = z.object({
  severity: SeveritySchema,
  code: z.string(),
  stage: StageSchema,
  message: z.string(),
  file: z.string().nullable(),
  line: z.number().int().min(1).nullable(),
  column: z.number().int().min(1).nullable(),
  end_line: z.number().int().min(1).nullable(),
  end_column: z.number().int().min(1).nullable(),
  node: z.string().nullable(),
  source_line: z.string().nullable(),
  notes: z.array(DiagnosticNoteSchema),
  hint: z.string().nullable(),
  traceback: z.string().nullable(),
  /**
   * Where in a JSON document the problem is, as an RFC 6901 JSON pointer (`/nodes/2/depends_on/0`; `""` is
   * the whole document): set for JSON pipelines, `null` for Python workflows and for problems of no place.
   */
  pointer: z.string().nullable(),
});
export type Diagnostic = z.infer<typeof DiagnosticSchema>;
