import { z } from "zod";
import { DiagnosticSchema, StageSchema } from "./diagnostic";

export const StageStatusSchema = z.enum(["pass", "fail", "skipped"]);
export type StageStatus = z.infer<typeof StageStatusSchema>;

/**
 * The `icode workflow validate --json` report, version 1. Every field is always present. It lives here, beside
 * the diagnostics it carries, because two validators build it: the engine's for Python workflows and
 * `@icode/pipelines`' for JSON pipelines (which the engine depends on, so it cannot import the engine).
 */
export const ValidateReportSchema = z.object({
  version: z.literal(1),
  status: z.enum(["pass", "fail"]),
  target: z.object({
    path: z.string(),
    layout: z.enum(["file", "package"]).nullable(),
    workflow_id: z.string().nullable(),
    entry: z.string().nullable(),
    package_dir: z.string().nullable(),
    source_digest: z.string().nullable(),
    files: z.number().int().nullable(),
  }),
  stages: z.array(z.object({ name: StageSchema, status: StageStatusSchema })),
  diagnostics: z.array(DiagnosticSchema),
  diagnostics_truncated: z.boolean(),
  sites_truncated: z.boolean(),
  workflow: z
    .object({
      title: z.string(),
      node_count: z.number().int(),
      edge_count: z.number().int(),
      outputs: z.array(z.string()),
    })
    .nullable(),
  output: z.object({ text: z.string(), truncated: z.boolean() }),
  /** Ours, beyond the spec's list: the interpreter the `environment` stage started, once known. */
  environment: z
    .object({
      kind: z.enum(["default", "user"]),
      executable: z.string(),
      version: z.string(),
      implementation: z.string(),
      platform: z.string(),
      machine: z.string(),
    })
    .nullable(),
});
export type ValidateReport = z.infer<typeof ValidateReportSchema>;
