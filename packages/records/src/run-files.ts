import { CapturedTextSchema, TailTextSchema } from "@icode/workflow-graph";
import { z } from "zod";
import { RunOutputSchema } from "./engine-events";
import { RunIdSchema, SessionIdSchema } from "./ids";

/** The shapes of the JSON files in a run folder (layout in ./layout and docs/records.md). */

export const RUN_FORMAT = 1 as const;

/** `run.json`: who started the run, when, and which process ran it (for orphan detection). */
export const RunHeaderSchema = z.object({
  format: z.literal(RUN_FORMAT),
  run_id: RunIdSchema,
  session_id: SessionIdSchema,
  workflow_id: z.string(),
  /** ISO 8601 UTC. */
  started_at: z.string(),
  pid: z.number().int().min(1),
  /** `processStartMarker(pid)` when the run started; `null` where it cannot be read (not Linux). */
  process_start: z.string().nullable(),
  engine_version: z.string(),
});
export type RunHeader = z.infer<typeof RunHeaderSchema>;

/**
 * `output.json`: output that belongs to no node attempt (the run JSON's `diagnostics` object). `load` is
 * what loading the workflow printed; `native` the last 64 KiB of fd-level writes and child-process output,
 * with the bytes dropped before it counted (clarification 17). `error` when collecting them failed.
 */
export const RunDiagnosticsSchema = z.object({
  load: CapturedTextSchema.optional(),
  native: TailTextSchema.optional(),
  error: z.string().optional(),
});
export type RunDiagnostics = z.infer<typeof RunDiagnosticsSchema>;

/** `outputs.json`: the final outputs in `output()` order. */
export const RunOutputsSchema = z.array(RunOutputSchema);

/** The resolved execution environment (interpreter, versions, fingerprint…), kept as given. */
export const EnvironmentRecordSchema = z.record(z.string(), z.json());
export type EnvironmentRecord = z.infer<typeof EnvironmentRecordSchema>;
