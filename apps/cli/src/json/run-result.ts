import { FinishedRunSchema } from "@icode/workflow-engine";
import { z } from "zod";

/**
 * The `--json` result of `icode workflow run`: exactly the reference's top-level fields ("JSON output"),
 * taken from the engine's finished run (one source for the run's end), with `duration` measured by the CLI
 * and `session_id` and `diagnostics` nullable as the reference allows.
 */
export const RunResultJsonSchema = z.strictObject({
  session_id: FinishedRunSchema.shape.session_id.nullable(),
  run_id: FinishedRunSchema.shape.run_id,
  outcome: FinishedRunSchema.shape.outcome,
  reason: FinishedRunSchema.shape.reason,
  node_id: FinishedRunSchema.shape.node_id,
  error: FinishedRunSchema.shape.error,
  /** Seconds measured by the CLI from the start of the command, preparation included. */
  duration: z.number().min(0),
  diagnostics: FinishedRunSchema.shape.diagnostics.nullable(),
  outputs: FinishedRunSchema.shape.outputs,
});
export type RunResultJson = z.infer<typeof RunResultJsonSchema>;
