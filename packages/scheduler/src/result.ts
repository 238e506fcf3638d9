import { z } from "zod";
import { CancelReasonSchema, ControlErrorCodeSchema, RunOutcomeSchema } from "./codes";
import { RunOutputSchema } from "./value";

/**
 * How a run ended, in the fields of the run JSON that the scheduler knows (`outcome`, `reason`, `node_id`,
 * `error`, `outputs`, with `""` for "none" as there), plus the failing activation and the error class. This
 * one shape is the `workflow_run_end` event, the scheduler's `RunResult` and the engine's finished-run report:
 * each adds its own envelope to it.
 */
export const RunEndSchema = z.object({
  outcome: RunOutcomeSchema,
  /** Set only for `cancelled` (clarification 11). */
  reason: z.union([CancelReasonSchema, z.literal("")]),
  node_id: z.string(),
  error: z.string(),
  /** The failing activation, or `null`. */
  activation_id: z.string().nullable(),
  /** The error class of the failure (`loop_no_value`, `ask_unavailable`, `timeout`, …), or `null`. */
  error_class: z.string().nullable(),
  /** The completed output nodes, in `output()` order. */
  outputs: z.array(RunOutputSchema),
});
export type RunEnd = z.infer<typeof RunEndSchema>;

/**
 * What `run.result` resolves with: the run's end. The same values are in the `workflow_run_end` event,
 * except when the sink's final `flush` fails: then the result says `storage_failed`.
 */
export const RunResultSchema = RunEndSchema.extend({ run_id: z.string() });
export type RunResult = z.infer<typeof RunResultSchema>;

/** The answer of a control operation: done, or refused with a code and a message saying why. */
export const ControlResultSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), code: ControlErrorCodeSchema, message: z.string() }),
]);
export type ControlResult = z.infer<typeof ControlResultSchema>;

/** States of an activation that has begun and not settled, as `WorkflowRun.inspect()` reports them. */
const ACTIVATION_STATES = [
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
const ActivationStateSchema = z.enum(ACTIVATION_STATES);
export type ActivationState = z.infer<typeof ActivationStateSchema>;

/** The scheduler's own view of a run: what is live now, in the order it began. O(live activations). */
export const RunSnapshotSchema = z.object({
  run_id: z.string(),
  state: z.enum(["running", "paused", "finished"]),
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
