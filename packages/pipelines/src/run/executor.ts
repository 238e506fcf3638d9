import { AgentActivitySchema, TokenUsageSchema } from "@icode/workflow-scheduler";
import { z } from "zod";
import type { PipelineNode } from "../definition";
import type { Handoff } from "../handoff";
import type { OutputSchema } from "../output-schema";

/**
 * The seam between the pipeline driver (this package: states, policies, approvals, leases) and whatever runs
 * one agent attempt of a node (`@icode/workflow-agents/pipeline`: runtimes, sessions, `submit_handoff`,
 * correction rounds). The driver renders the prompt and owns every state change; the executor runs the
 * attempt and says how it ended.
 */

/** The launch's worker gear: what a node's `permission_mode: null` inherits. */
export const LAUNCH_PERMISSION_MODES = ["bounded", "yolo"] as const;
export type LaunchPermissionMode = (typeof LAUNCH_PERMISSION_MODES)[number];

/** One attempt of one node. */
export interface NodeRunRequest {
  readonly runId: string;
  /** The node as the run's definition snapshot has it (defaults filled in). */
  readonly node: PipelineNode;
  /** 1 for the first attempt; every retry (asked for, or after a driver crash) counts. */
  readonly attempt: number;
  /** The rendered `prompt_template` (only direct dependencies substituted, the rest left raw). */
  readonly prompt: string;
  /** `output_schema`, or the reference's default schema when the node sets none. */
  readonly outputSchema: OutputSchema;
  /** The `session_ref` recorded for the node named by `reuse_session_of`; null for a new session. */
  readonly reuseSession: string | null;
  /**
   * Whether a node of the run that has not succeeded yet continues this attempt's session (its
   * `reuse_session_of` names this node, or a node whose session this one continues). When false the
   * executor ends the session once the attempt ends, so a run of many nodes does not keep every agent alive.
   */
  readonly keepSession: boolean;
  /** The run's folder on disk; the attempt writes under `nodes/<node id>/` (transcripts, worktree). */
  readonly runDir: string;
  /** Where the run was started: a node's relative `cwd` resolves against it. */
  readonly launchCwd: string;
  readonly launchPermissionMode: LaunchPermissionMode;
  /** The environment profiles and models are resolved in (API keys, `ICODE_*`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Progress while the attempt runs, in order. Must not throw. */
  readonly onEvent: (event: NodeRunEvent) => void;
}

/** What happens inside an attempt, as it happens. */
export const NodeRunEventSchema = z.discriminatedUnion("type", [
  /** The worker started: the node goes `launching` → `running`. */
  z.object({ type: z.literal("running"), session_ref: z.string().nullable() }),
  z.object({ type: z.literal("activity"), activity: AgentActivitySchema }),
  /** The handoff did not match the schema; the same session is asked again (`round` counts from 1). */
  z.object({
    type: z.literal("correction"),
    round: z.number().int().min(1),
    problems: z.array(z.string()),
  }),
]);
export type NodeRunEvent = z.infer<typeof NodeRunEventSchema>;

/** Where an attempt's records are, relative to the run's folder, and what it used. */
export const NodeAttemptRecordSchema = z.object({
  /** The agent session the attempt ran in (what `reuse_session_of` continues); null when none survives. */
  session_ref: z.string().nullable(),
  /** Handoff correction rounds asked for. */
  corrections: z.number().int().min(0),
  /** The transcript file, relative to the run's folder; null when the attempt wrote none. */
  transcript: z.string().nullable(),
  usage: TokenUsageSchema.nullable(),
});
export type NodeAttemptRecord = z.infer<typeof NodeAttemptRecordSchema>;

/** How an attempt ended. `failed` and `canceled` attempts may be retried by `retry_node`. */
export type NodeOutcome = NodeAttemptRecord &
  (
    | { status: "succeeded"; handoff: Handoff }
    /** The worker blocked itself (`report_blocked`), or the handoff was still wrong after the last round. */
    | { status: "blocked"; reason: string; handoff: Handoff | null }
    | {
        status: "failed";
        /**
         * `transient`: the failure may pass on its own (a dropped connection, a rate limit, a worker that
         * died); the built-in supervisor retries such an attempt once. Absent means false.
         */
        error: { code: string; message: string; transient?: boolean };
      }
    /** The signal was aborted (a cancel, or the driver stopping; a pause lets running attempts finish). */
    | { status: "canceled" }
  );

/** Runs node attempts. One executor serves any number of runs and attempts at once. */
export interface NodeExecutor {
  /** Runs one attempt. Resolves (never rejects) with how it ended; aborting `signal` ends it `canceled`. */
  runNode(request: NodeRunRequest, signal: AbortSignal): Promise<NodeOutcome>;
  /** Gracefully ends the agent sessions the run's attempts left open (`stop_sessions`). */
  stopSessions(runId: string): Promise<void>;
  /** Ends every session and process the executor started. */
  close(): Promise<void>;
}
