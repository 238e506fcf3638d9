import { z } from "zod";
import { CommandSchema, NODE_STATES, RUN_STATES } from "../store/records";
import { NodeRunEventSchema } from "./executor";

const NodeErrorSchema = z.object({ code: z.string(), message: z.string() });

/** How an attempt ended: the executor's statuses, or `interrupted` when its driver died or stopped. */
export const ATTEMPT_STATUSES = [
  "running",
  "succeeded",
  "blocked",
  "failed",
  "canceled",
  "interrupted",
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** What a supervisor decided about a failed or blocked node (`src/run/supervisor.ts`). */
export const SupervisorDecisionSchema = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("retry"), reason: z.string() }),
  z.strictObject({ action: z.literal("skip"), note: z.string().nullable(), reason: z.string() }),
  z.strictObject({ action: z.literal("leave"), reason: z.string() }),
]);
export type SupervisorDecision = z.infer<typeof SupervisorDecisionSchema>;

/**
 * Everything that happens to a run, in order: one append-only stream per run (the store's events table,
 * mirrored to `events.jsonl` in the run's folder). Every state change the driver writes comes with its event
 * in the same transaction, so the stream and the states never disagree.
 */
export const PipelineEventSchema = z.discriminatedUnion("type", [
  /** A driver took the run's lease (`took_over`: from an expired driver). */
  z.strictObject({
    type: z.literal("driver_started"),
    owner: z.string(),
    generation: z.number().int().min(1),
    took_over: z.boolean(),
  }),
  /** The driver gave the run up (`DriveStop`): `converged`, `paused`, `waiting_approval`, `stopped` (its signal). */
  z.strictObject({
    type: z.literal("driver_stopped"),
    owner: z.string(),
    reason: z.enum(["converged", "paused", "waiting_approval", "stopped"]),
  }),
  z.strictObject({
    type: z.literal("run_state"),
    from: z.enum(RUN_STATES),
    to: z.enum(RUN_STATES),
    reason: z.string(),
  }),
  z.strictObject({
    type: z.literal("node_state"),
    node_id: z.string(),
    from: z.enum(NODE_STATES),
    to: z.enum(NODE_STATES),
    reason: z.string(),
  }),
  z.strictObject({
    type: z.literal("attempt_started"),
    node_id: z.string(),
    attempt: z.number().int().min(1),
  }),
  z.strictObject({
    type: z.literal("attempt_ended"),
    node_id: z.string(),
    attempt: z.number().int().min(1),
    status: z.enum(ATTEMPT_STATUSES),
    error: NodeErrorSchema.nullable(),
  }),
  /** Progress the executor reported during an attempt (`NodeRunEvent`). */
  z.strictObject({
    type: z.literal("node_event"),
    node_id: z.string(),
    attempt: z.number().int().min(1),
    event: NodeRunEventSchema,
  }),
  z.strictObject({
    type: z.literal("command_applied"),
    command_id: z.number().int().min(1),
    command: CommandSchema,
  }),
  z.strictObject({
    type: z.literal("command_refused"),
    command_id: z.number().int().min(1),
    command: CommandSchema,
    code: z.string(),
    message: z.string(),
  }),
  /** Supervision (`auto_supervise`) turned on when the run started, or off once it converged. */
  z.strictObject({ type: z.literal("supervision"), on: z.boolean() }),
  z.strictObject({
    type: z.literal("supervisor_decision"),
    node_id: z.string(),
    attempt: z.number().int().min(1),
    decision: SupervisorDecisionSchema,
    /** Decisions the run may still take after this one. */
    budget_left: z.number().int().min(0),
  }),
]);
export type PipelineEvent = z.infer<typeof PipelineEventSchema>;

/** An event as stored: `seq` counts from 1 within its run, without gaps. */
export const StoredPipelineEventSchema = z.strictObject({
  run_id: z.string(),
  seq: z.number().int().min(1),
  time: z.iso.datetime(),
  event: PipelineEventSchema,
});
export type StoredPipelineEvent = z.infer<typeof StoredPipelineEventSchema>;

/** The start of an attempt, as `updateRun` records it (status `running`, `started_at` now). */
export const AttemptStartSchema = z.strictObject({
  node_id: z.string(),
  attempt: z.number().int().min(1),
  prompt: z.string(),
});
export type AttemptStart = z.infer<typeof AttemptStartSchema>;

const AttemptOutcomeFields = {
  session_ref: z.string().nullable(),
  corrections: z.number().int().min(0),
  transcript: z.string().nullable(),
  usage: z.record(z.string(), z.unknown()).nullable(),
  handoff: z.record(z.string(), z.unknown()).nullable(),
  /** Why a blocked attempt blocked. */
  reason: z.string().nullable(),
  error: NodeErrorSchema.nullable(),
};

/** The end of an attempt: how it ended and the outcome's record. */
export const AttemptEndSchema = z.strictObject({
  node_id: z.string(),
  attempt: z.number().int().min(1),
  status: z.enum(ATTEMPT_STATUSES).exclude(["running"]),
  ...AttemptOutcomeFields,
});
export type AttemptEnd = z.infer<typeof AttemptEndSchema>;

/** One attempt of one node, as stored. */
export const NodeAttemptSchema = z.strictObject({
  run_id: z.string(),
  node_id: z.string(),
  attempt: z.number().int().min(1),
  prompt: z.string(),
  status: z.enum(ATTEMPT_STATUSES),
  started_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
  ...AttemptOutcomeFields,
});
export type NodeAttempt = z.infer<typeof NodeAttemptSchema>;
