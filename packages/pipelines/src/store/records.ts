import { z } from "zod";
import { FAILURE_POLICIES, PipelineDefinitionSchema } from "../definition";

/** A definition's lifecycle status: a draft cannot be run. */
export const DEFINITION_STATUSES = ["draft", "published"] as const;
/** Where a definition comes from; built-in and extension definitions are locked. */
export const DEFINITION_SOURCES = ["user", "builtin", "extension"] as const;

/** The reference's run states. */
export const RUN_STATES = ["pending", "running", "paused", "succeeded", "failed", "canceled"] as const;
export type RunState = (typeof RUN_STATES)[number];
/** Run states a run does not leave by itself; the store stamps `ended_at` when a run enters one. */
export const TERMINAL_RUN_STATES: readonly RunState[] = ["succeeded", "failed", "canceled"];

/** The reference's node states. */
export const NODE_STATES = [
  "pending",
  "ready",
  "waiting_approval",
  "launching",
  "running",
  "blocked",
  "succeeded",
  "failed",
  "canceled",
] as const;
export type NodeState = (typeof NODE_STATES)[number];

/** Times are ISO 8601 UTC with milliseconds (`2026-05-01T12:00:00.000Z`). */
const TimeSchema = z.iso.datetime();
const DefinitionIdSchema = z.string();
const RunIdSchema = z.string().regex(/^[0-9a-f]{32}$/);

export const StoredDefinitionSchema = z.object({
  id: DefinitionIdSchema,
  /** The definition's `name`, kept beside it for listing. */
  name: z.string(),
  status: z.enum(DEFINITION_STATUSES),
  /** 1 when created, +1 on every change (content, status). */
  revision: z.number().int().min(1),
  source: z.enum(DEFINITION_SOURCES),
  /** True for built-in and extension definitions: they cannot be edited, published or deleted here. */
  locked: z.boolean(),
  definition: PipelineDefinitionSchema,
  created_at: TimeSchema,
  updated_at: TimeSchema,
  /** When it was last published, or null for a definition never published. */
  published_at: TimeSchema.nullable(),
});
export type StoredDefinition = z.infer<typeof StoredDefinitionSchema>;

/** A run: a snapshot of the definition it started from, and its state. Node states are kept apart. */
export const PipelineRunSchema = z.object({
  run_id: RunIdSchema,
  definition_id: DefinitionIdSchema,
  definition_revision: z.number().int().min(1),
  definition: PipelineDefinitionSchema,
  task_input: z.string(),
  state: z.enum(RUN_STATES),
  failure_policy: z.enum(FAILURE_POLICIES),
  created_at: TimeSchema,
  /** When the run first left `pending`. */
  started_at: TimeSchema.nullable(),
  /** When the run last entered a terminal state; null while it is not in one. */
  ended_at: TimeSchema.nullable(),
  updated_at: TimeSchema,
});
export type PipelineRun = z.infer<typeof PipelineRunSchema>;

const NodeErrorSchema = z.object({ code: z.string(), message: z.string() });

/** One node's state within a run. */
export const RunNodeSchema = z.object({
  run_id: RunIdSchema,
  node_id: z.string(),
  state: z.enum(NODE_STATES),
  /** Attempts started so far (a retry after a crash counts). */
  attempts: z.number().int().min(0),
  /** The accepted handoff, or null. */
  handoff: z.record(z.string(), z.unknown()).nullable(),
  /** Which agent session the node ran in (opaque to the store: the run side writes and reads it). */
  session_ref: z.string().nullable(),
  /** Whether a human approved the node's `requires_approval` gate. */
  approval_granted: z.boolean(),
  error: NodeErrorSchema.nullable(),
  updated_at: TimeSchema,
});
export type RunNode = z.infer<typeof RunNodeSchema>;

/** What a lease holder may change about a run in one atomic write. */
export const RunPatchSchema = z.strictObject({ state: z.enum(RUN_STATES).optional() });
export type RunPatch = z.infer<typeof RunPatchSchema>;

export const NodePatchSchema = z.strictObject({
  state: z.enum(NODE_STATES).optional(),
  attempts: z.number().int().min(0).optional(),
  handoff: z.record(z.string(), z.unknown()).nullable().optional(),
  session_ref: z.string().nullable().optional(),
  approval_granted: z.boolean().optional(),
  error: NodeErrorSchema.nullable().optional(),
});
export type NodePatch = z.infer<typeof NodePatchSchema>;

/** Who drives a run: one owner at a time, until `expires_at`; `generation` counts acquisitions. */
export const LeaseSchema = z.object({
  run_id: RunIdSchema,
  owner: z.string(),
  generation: z.number().int().min(1),
  acquired_at: TimeSchema,
  expires_at: TimeSchema,
});
export type Lease = z.infer<typeof LeaseSchema>;

export type LeaseResult =
  | {
      ok: true;
      lease: Lease;
      /** True when an expired lease of another owner was taken over (its taken commands are queued again). */
      took_over: boolean;
    }
  | { ok: false; held_by: Lease };

/** The run control actions another process sends to a run's driver through the store. */
export const CommandSchema = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("pause") }),
  z.strictObject({ action: z.literal("resume") }),
  z.strictObject({ action: z.literal("cancel") }),
  z.strictObject({ action: z.literal("stop_sessions") }),
  z.strictObject({ action: z.literal("approve_node"), node_id: z.string() }),
  z.strictObject({ action: z.literal("retry_node"), node_id: z.string() }),
  z.strictObject({ action: z.literal("skip_node"), node_id: z.string(), note: z.string().nullable() }),
]);
export type Command = z.infer<typeof CommandSchema>;

/** What the driver answered: done, or refused with a code (the run side's control codes). */
export const CommandResultSchema = z.discriminatedUnion("ok", [
  z.strictObject({ ok: z.literal(true) }),
  z.strictObject({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type CommandResult = z.infer<typeof CommandResultSchema>;

export const COMMAND_STATES = ["queued", "taken", "done"] as const;

export const StoredCommandSchema = z.object({
  /** Increasing across the store: the order commands were sent in. */
  command_id: z.number().int().min(1),
  run_id: RunIdSchema,
  command: CommandSchema,
  state: z.enum(COMMAND_STATES),
  enqueued_at: TimeSchema,
  taken_by: z.string().nullable(),
  taken_at: TimeSchema.nullable(),
  completed_at: TimeSchema.nullable(),
  result: CommandResultSchema.nullable(),
});
export type StoredCommand = z.infer<typeof StoredCommandSchema>;
