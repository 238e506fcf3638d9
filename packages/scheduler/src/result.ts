import { z } from "zod";
import { CancelReasonSchema, ControlErrorCodeSchema, RunOutcomeSchema } from "./codes";
import { RunOutputSchema } from "./value";

/**
 * What `run.result` resolves with: the fields of the run JSON that the scheduler knows (`outcome`,
 * `reason`, `node_id`, `error`, `outputs`), with `""` for "none" as there, plus the failing activation and
 * the error class. The same values are in the `workflow_run_end` event, except when the sink's final
 * `flush` fails: then the result says `storage_failed`.
 */
export const RunResultSchema = z.object({
  run_id: z.string(),
  outcome: RunOutcomeSchema,
  reason: z.union([CancelReasonSchema, z.literal("")]),
  node_id: z.string(),
  error: z.string(),
  activation_id: z.string().nullable(),
  error_class: z.string().nullable(),
  outputs: z.array(RunOutputSchema),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** The answer of a control operation: done, or refused with a code and a message saying why. */
export const ControlResultSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), code: ControlErrorCodeSchema, message: z.string() }),
]);
export type ControlResult = z.infer<typeof ControlResultSchema>;

/** States of an activation that has begun and not settled, as `inspect()` reports them. */
export const ACTIVATION_STATES = [
  "waiting_approval",
  "queued",
  "running",
  "retry_backoff",
  "deciding",
  "looping",
  "until",
  "combining",
  "awaiting_retry",
] as const;
export const ActivationStateSchema = z.enum(ACTIVATION_STATES);
export type ActivationState = z.infer<typeof ActivationStateSchema>;

export const RunSnapshotSchema = z.object({
  run_id: z.string(),
  state: z.enum(["running", "paused", "finished"]),
  /** Activations that have begun and not settled, in the order they began. */
  activations: z.array(
    z.object({
      node_id: z.string(),
      activation_id: z.string(),
      state: ActivationStateSchema,
      /** Attempts made so far (0 before the first). */
      attempts: z.number().int().min(0),
    }),
  ),
});
export type RunSnapshot = z.infer<typeof RunSnapshotSchema>;
