import { z } from "zod";
import { RunOutcomeSchema } from "../engine-events";

/** The lifecycle events a workflow session fires (spec "Lifecycle hooks"). */
export const HOOK_EVENTS = [
  "session_start",
  "session_restored",
  "session_end",
  "workflow_run_start",
  "workflow_run_end",
] as const;
const HookEventSchema = z.enum(HOOK_EVENTS);
export type HookEvent = z.infer<typeof HookEventSchema>;

/**
 * A hook's command: an argv array, run directly without a shell (`["notify-send", "run done"]`), or one
 * string, run by the system shell (`/bin/sh -c` on POSIX, `cmd.exe` on Windows) for pipes and redirects.
 */
const HookCommandSchema = z.union([
  z.array(z.string().min(1, "an argv entry must not be empty")).min(1, "an argv array needs the program"),
  z.string().trim().min(1, "a shell command must not be blank"),
]);

/**
 * What happens when a hook fails (non-zero exit, killed, timed out, not startable): `warn` reports a
 * warning, `ignore` stays silent, `block` would stop the action for other hook kinds; for workflow events it
 * is reported as a warning (spec).
 */
const HookOnErrorSchema = z.enum(["warn", "ignore", "block"]);

export const HookSchema = z.strictObject({
  event: HookEventSchema,
  command: HookCommandSchema,
  /** The hook is killed (its whole process group) when it runs longer. */
  timeout_seconds: z.number().positive().max(3600).default(30),
  /** `true`: iCode waits for the hook before going on (a run still is never blocked by its answer). */
  blocking: z.boolean().default(false),
  on_error: HookOnErrorSchema.default("warn"),
});
export type Hook = z.infer<typeof HookSchema>;
export type HookInput = z.input<typeof HookSchema>;

/** `<chrysHome>/hooks.json` */
export const HooksConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  hooks: z.array(HookSchema),
});
export type HooksConfig = z.infer<typeof HooksConfigSchema>;

/** Base fields of every workflow hook payload (docs/hooks.md "Base fields"). */
const base = {
  session_kind: z.literal("workflow"),
  workflow_id: z.string(),
  session_id: z.string(),
  /** The session's working directory; the hook also runs there. */
  cwd: z.string(),
  /** Always `""`: a workflow session is bound to no single agent profile. */
  profile: z.literal(""),
};

/** The JSON a hook reads on stdin, one object per event. */
export const HookPayloadSchema = z.discriminatedUnion("event", [
  z.object({ event: z.literal("session_start"), ...base }),
  z.object({ event: z.literal("session_restored"), ...base, restored_session_id: z.string() }),
  z.object({ event: z.literal("session_end"), ...base }),
  z.object({ event: z.literal("workflow_run_start"), ...base, run_id: z.string(), input_text: z.string() }),
  z.object({
    event: z.literal("workflow_run_end"),
    ...base,
    run_id: z.string(),
    outcome: RunOutcomeSchema,
    reason: z.string(),
  }),
]);
export type HookPayload = z.infer<typeof HookPayloadSchema>;
type HookPayloadOf<E extends HookEvent> = Extract<HookPayload, { event: E }>;

/** What the caller gives `runHooks`: the event's fields without the constant ones. */
export type HookFields<E extends HookEvent> = Omit<HookPayloadOf<E>, "event" | "session_kind" | "profile">;

export const HOOK_WARNING_CODES = [
  "hooks_config_invalid",
  "hook_spawn_failed",
  "hook_failed",
  "hook_timeout",
  "hook_block_ignored",
] as const;

export const HookWarningSchema = z.object({
  code: z.enum(HOOK_WARNING_CODES),
  event: HookEventSchema,
  /** Position of the hook in `hooks.json`, or `null` for a configuration problem. */
  hook: z.number().int().min(0).nullable(),
  message: z.string(),
});
export type HookWarning = z.infer<typeof HookWarningSchema>;
