import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type TokenUsage, TokenUsageSchema } from "@icode/workflow-scheduler";
import { z } from "zod";
import { type EngineEvent, RunOutcomeSchema } from "../engine-events";
import { readEventLog } from "../event-log";
import { isRunId } from "../ids";
import { readJsonFile } from "../json-file";
import { FILES } from "../layout";
import { RunHeaderSchema } from "../run-files";
import { SessionSchema } from "../session";

/**
 * Tokens an agent attempt used: the last `usage` activity of the attempt (agents report it cumulatively),
 * summed into its activation and run. `null` wherever nothing is known (Python nodes, agents that report
 * nothing).
 */
export const UsageSchema = TokenUsageSchema;
export type Usage = TokenUsage;

/** One tool call of an agent attempt, from its `tool_call` activities: first report to the last. */
export const TrajectoryToolCallSchema = z.object({
  tool_call_id: z.string(),
  title: z.string(),
  tool_kind: z.string(),
  status: z.string(),
  ...{
    start_ms: z.number(),
    end_ms: z.number().nullable(),
    duration_ms: z.number().min(0).nullable(),
  },
});

/** Milliseconds on the run's clock (epoch milliseconds for real runs); `null` when not (yet) known. */
const timing = {
  start_ms: z.number().nullable(),
  end_ms: z.number().nullable(),
  duration_ms: z.number().min(0).nullable(),
};

export const ATTEMPT_STATUSES = ["running", "completed", "failed", "cancelled"] as const;
export const TrajectoryAttemptSchema = z.object({
  attempt: z.number().int().min(1),
  status: z.enum(ATTEMPT_STATUSES),
  error_class: z.string().nullable(),
  error: z.string().nullable(),
  ...timing,
  usage: UsageSchema.nullable(),
  /** An agent attempt's tool calls, in the order they started (empty for other nodes). */
  tool_calls: z.array(TrajectoryToolCallSchema),
});

export const ACTIVATION_STATUSES = [
  "running",
  "waiting_approval",
  "awaiting_retry",
  "completed",
  "failed",
  "skipped",
  "cancelled",
] as const;
export const TrajectoryNodeSchema = z.object({
  activation_id: z.string(),
  node_id: z.string(),
  kind: z.enum(["python", "agent", "loop", "join"]).nullable(),
  iteration: z.number().int().min(1),
  loop_id: z.string().nullable(),
  status: z.enum(ACTIVATION_STATUSES),
  ...timing,
  usage: UsageSchema.nullable(),
  attempts: z.array(TrajectoryAttemptSchema),
  emits: z.array(z.object({ ts: z.number(), attempt: z.number().int(), text: z.string() })),
  questions: z.array(
    z.object({
      ts: z.number(),
      attempt: z.number().int(),
      question_id: z.number().int(),
      summary: z.string(),
      answer: z.object({ ts: z.number(), status: z.string(), summary: z.string() }).nullable(),
    }),
  ),
});

export const TrajectoryRunSchema = z.object({
  run_id: z.string(),
  started_at: z.string(),
  /** `null` while no end event is recorded (the run is still going, or died and was not recovered yet). */
  outcome: RunOutcomeSchema.nullable(),
  reason: z.string(),
  node_id: z.string(),
  error: z.string(),
  ...timing,
  usage: UsageSchema.nullable(),
  /** Activations in the order they started. */
  nodes: z.array(TrajectoryNodeSchema),
  warnings: z.array(z.string()),
});

/** `icode trajectory export --format json`. */
export const TrajectorySchema = z.object({
  format: z.literal("icode-workflow-trajectory"),
  version: z.literal(1),
  session: SessionSchema.pick({
    session_id: true,
    workflow_id: true,
    workflow_path: true,
    source: true,
    workspace: true,
    created_at: true,
  }),
  runs: z.array(TrajectoryRunSchema),
});
export type Trajectory = z.infer<typeof TrajectorySchema>;
export type TrajectoryRun = z.infer<typeof TrajectoryRunSchema>;
export type TrajectoryNode = z.infer<typeof TrajectoryNodeSchema>;
export type TrajectoryAttempt = z.infer<typeof TrajectoryAttemptSchema>;

/** Runs of a session read for export: folder order by start time. */
export function readSessionRuns(sessionDirPath: string): {
  session: z.infer<typeof SessionSchema>;
  runs: { run: TrajectoryRun; events: EngineEvent[] }[];
} {
  const session = readJsonFile(join(sessionDirPath, FILES.session), SessionSchema, "the session file");
  const folder = join(sessionDirPath, FILES.runs);
  let names: string[] = [];
  try {
    names = readdirSync(folder).filter(isRunId);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== "ENOENT") throw cause;
  }
  const runs = names.map((runId) => {
    const dir = join(folder, runId);
    const header = readJsonFile(join(dir, FILES.header), RunHeaderSchema, "the run header");
    const log = readEventLog(join(dir, FILES.events));
    return {
      run: buildRun(
        header.run_id,
        header.started_at,
        log.events,
        log.warnings.map((w) => w.message),
      ),
      events: log.events,
    };
  });
  runs.sort((a, b) =>
    a.run.started_at < b.run.started_at ? -1 : a.run.started_at > b.run.started_at ? 1 : 0,
  );
  return { session, runs };
}

/** The JSON trajectory of a session: runs, activations, attempts, timings and usage, from `events.jsonl`. */
export function buildTrajectory(sessionDirPath: string): Trajectory {
  const { session, runs } = readSessionRuns(sessionDirPath);
  return {
    format: "icode-workflow-trajectory",
    version: 1,
    session: {
      session_id: session.session_id,
      workflow_id: session.workflow_id,
      workflow_path: session.workflow_path,
      source: session.source,
      workspace: session.workspace,
      created_at: session.created_at,
    },
    runs: runs.map((r) => r.run),
  };
}

function span(start: number | null, end: number | null) {
  return {
    start_ms: start,
    end_ms: end,
    duration_ms: start !== null && end !== null ? Math.max(0, end - start) : null,
  };
}

function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (a === null) return b;
  if (b === null) return a;
  const nullable = (x: number | null, y: number | null) => (x === null ? y : y === null ? x : x + y);
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    cached_input_tokens: nullable(a.cached_input_tokens, b.cached_input_tokens),
    reasoning_tokens: nullable(a.reasoning_tokens, b.reasoning_tokens),
    cost:
      a.cost === null || b.cost === null || a.cost.currency !== b.cost.currency
        ? (a.cost ?? b.cost)
        : { amount: a.cost.amount + b.cost.amount, currency: a.cost.currency },
  };
}

/** Folds one run's events into its trajectory. Exposed for stores that keep events elsewhere. */
export function buildRun(
  runId: string,
  startedAt: string,
  events: readonly EngineEvent[],
  warnings: string[] = [],
): TrajectoryRun {
  const nodes = new Map<string, TrajectoryNode>();
  const openAttempts = new Map<string, TrajectoryAttempt>();
  let start: number | null = null;
  let end: number | null = null;
  let outcome: TrajectoryRun["outcome"] = null;
  let reason = "";
  let failedNode = "";
  let error = "";

  const node = (e: {
    activation_id: string;
    node_id: string;
    iteration: number;
    loop_id: string | null;
    ts: number;
  }) => {
    let entry = nodes.get(e.activation_id);
    if (entry === undefined) {
      entry = {
        activation_id: e.activation_id,
        node_id: e.node_id,
        kind: null,
        iteration: e.iteration,
        loop_id: e.loop_id,
        status: "running",
        ...span(e.ts, null),
        usage: null,
        attempts: [],
        emits: [],
        questions: [],
      };
      nodes.set(e.activation_id, entry);
    }
    return entry;
  };
  const closeNode = (entry: TrajectoryNode, status: TrajectoryNode["status"], ts: number) => {
    entry.status = status;
    Object.assign(entry, span(entry.start_ms, ts));
  };
  const closeAttempt = (
    activationId: string,
    attempt: number | null,
    status: TrajectoryAttempt["status"],
    ts: number,
    err: { class: string; message: string } | null,
  ) => {
    if (attempt === null) return;
    const key = `${activationId}\u0000${attempt}`;
    const open = openAttempts.get(key);
    if (open === undefined) return;
    openAttempts.delete(key);
    open.status = status;
    open.error_class = err?.class ?? null;
    open.error = err?.message ?? null;
    Object.assign(open, span(open.start_ms, ts));
  };

  events.forEach((event) => {
    switch (event.type) {
      case "workflow_run_start":
        start = event.ts;
        break;
      case "workflow_run_end":
        end = event.ts;
        outcome = event.outcome;
        reason = event.reason;
        failedNode = event.node_id;
        error = event.error;
        break;
      case "node_started": {
        const entry = node(event);
        entry.kind = event.kind;
        entry.status = "running";
        break;
      }
      case "node_waiting_approval":
        node(event).status = "waiting_approval";
        break;
      case "node_approved":
      case "node_retried":
        node(event).status = "running";
        break;
      case "attempt_started": {
        const entry = node(event);
        const attempt: TrajectoryAttempt = {
          attempt: event.attempt,
          status: "running",
          error_class: null,
          error: null,
          ...span(event.ts, null),
          usage: null,
          tool_calls: [],
        };
        entry.attempts.push(attempt);
        openAttempts.set(`${event.activation_id}\u0000${event.attempt}`, attempt);
        break;
      }
      case "attempt_failed":
        closeAttempt(event.activation_id, event.attempt, "failed", event.ts, event.error);
        break;
      case "node_completed": {
        const entry = node(event);
        entry.kind = event.kind;
        closeAttempt(event.activation_id, event.attempt, "completed", event.ts, null);
        closeNode(entry, "completed", event.ts);
        break;
      }
      case "node_failed": {
        const entry = node(event);
        closeAttempt(event.activation_id, event.attempt, "failed", event.ts, event.error);
        closeNode(entry, "failed", event.ts);
        break;
      }
      case "node_awaiting_retry":
        node(event).status = "awaiting_retry";
        break;
      case "node_skipped":
        closeNode(node(event), "skipped", event.ts);
        break;
      case "node_cancelled": {
        const entry = node(event);
        closeAttempt(event.activation_id, event.attempt, "cancelled", event.ts, null);
        closeNode(entry, "cancelled", event.ts);
        break;
      }
      case "emit":
        node(event).emits.push({ ts: event.ts, attempt: event.attempt, text: event.text });
        break;
      case "question":
        node(event).questions.push({
          ts: event.ts,
          attempt: event.attempt,
          question_id: event.question_id,
          summary: event.summary,
          answer: null,
        });
        break;
      case "answer": {
        const q = node(event).questions.find(
          (x) => x.attempt === event.attempt && x.question_id === event.question_id,
        );
        if (q !== undefined) q.answer = { ts: event.ts, status: event.status, summary: event.summary };
        break;
      }
      case "agent_activity": {
        const attempt = nodes.get(event.activation_id)?.attempts.findLast((a) => a.attempt === event.attempt);
        if (attempt === undefined) break;
        const activity = event.activity;
        // Usage is cumulative per attempt: the last report is the attempt's total.
        if (activity.kind === "usage") attempt.usage = activity.usage;
        if (activity.kind === "tool_call") {
          let call = attempt.tool_calls.find((c) => c.tool_call_id === activity.tool_call_id);
          if (call === undefined) {
            call = {
              tool_call_id: activity.tool_call_id,
              title: activity.title,
              tool_kind: activity.tool_kind,
              status: activity.status,
              ...span(event.ts, null),
            } as TrajectoryAttempt["tool_calls"][number];
            attempt.tool_calls.push(call);
          }
          call.status = activity.status;
          if (activity.title !== "") call.title = activity.title;
          if (activity.status === "completed" || activity.status === "failed") {
            Object.assign(call, span(call.start_ms, event.ts));
          }
        }
        break;
      }
      default:
        break;
    }
  });

  // Attempts still open when the run ended were cut off by its end.
  if (end !== null) {
    for (const [key, attempt] of openAttempts) {
      attempt.status = "cancelled";
      Object.assign(attempt, span(attempt.start_ms, end));
      openAttempts.delete(key);
    }
    for (const entry of nodes.values()) {
      if (entry.end_ms === null)
        closeNode(entry, entry.status === "running" ? "cancelled" : entry.status, end);
    }
  }
  let runUsage: Usage | null = null;
  for (const entry of nodes.values()) {
    for (const attempt of entry.attempts) entry.usage = addUsage(entry.usage, attempt.usage);
    runUsage = addUsage(runUsage, entry.usage);
  }
  if (start === null && events.length > 0) start = events[0]!.ts;
  return {
    run_id: runId,
    started_at: startedAt,
    outcome,
    reason,
    node_id: failedNode,
    error,
    ...span(start, end),
    usage: runUsage,
    nodes: [...nodes.values()],
    warnings,
  };
}
