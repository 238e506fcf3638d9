import { WorkflowError } from "@icode/workflow-errors";
import { CapturedTextSchema } from "@icode/workflow-graph";
import {
  type NodeDiagnostics,
  type RecordStore,
  type RunRecord,
  runProcessAlive,
  type Session,
} from "@icode/workflow-records";
import {
  type EngineEvent,
  NodeErrorSchema,
  type RunInspection,
  RunInspectionSchema,
  RunOutcomeSchema,
  RunView,
} from "@icode/workflow-scheduler";
import { z } from "zod";
import type { Subscription } from "./run/run-handle";

/**
 * Recorded sessions and runs, read back from the store: what `icode sessions list`, `icode runs …` and a
 * server's history views show. Reading never runs workflow code and never changes a record (an unfinished run
 * whose process is gone is shown `interrupted`; it is marked `orphaned` only when its session is restored).
 */

export const SessionSummarySchema = z.object({
  session_id: z.string(),
  workflow_id: z.string(),
  workflow_path: z.string(),
  source: z.string(),
  workspace: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  runs: z.number().int().min(0),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

export const RunSummarySchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  workflow_id: z.string(),
  /** `running` while its process runs it, `interrupted` when that process is gone without an end. */
  state: z.enum(["running", "finished", "interrupted"]),
  outcome: RunOutcomeSchema.nullable(),
  reason: z.string(),
  started_at: z.string(),
  /** Seconds from its first to its last event; `null` until it has ended. */
  duration: z.number().nullable(),
  location: z.string().nullable(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** One failure of a run, with its traceback: what `icode runs show` prints under the node. */
const RunFailureSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  attempt: z.number().int().nullable(),
  final: z.boolean(),
  error: NodeErrorSchema,
});

export const RunDetailsSchema = z.object({
  run: RunSummarySchema,
  error: z.string(),
  error_class: z.string().nullable(),
  node_id: z.string(),
  inspection: RunInspectionSchema,
  failures: z.array(RunFailureSchema),
  warnings: z.array(z.string()),
});
export type RunDetails = z.infer<typeof RunDetailsSchema>;

export const RunLogsSchema = z.object({
  run_id: z.string(),
  /** What each attempt printed (`print()` in the node), in attempt order. */
  captured: z.array(
    z.object({
      node_id: z.string(),
      activation_id: z.string(),
      attempt: z.number().int(),
      phase: z.string(),
      stdout: CapturedTextSchema,
    }),
  ),
  /** `ctx.emit()` messages, in order. */
  emits: z.array(
    z.object({
      node_id: z.string(),
      activation_id: z.string(),
      attempt: z.number().int(),
      ts: z.number(),
      text: z.string(),
    }),
  ),
});
export type RunLogs = z.infer<typeof RunLogsSchema>;

export interface RunHistory {
  /** Sessions, most recently used first. */
  sessions(): Promise<SessionSummary[]>;
  /** Runs of one session, or of every session, newest first. */
  runs(options?: { sessionId?: string }): Promise<RunSummary[]>;
  /** One run in full: its nodes, attempts and failures (with tracebacks). Rejects `run_not_found`. */
  show(runId: string): Promise<RunDetails>;
  /** What a run's nodes printed and emitted, optionally of one node. */
  logs(runId: string, options?: { nodeId?: string }): Promise<RunLogs>;
  inspect(runId: string): Promise<RunInspection>;
  /** A recorded run's events from `fromSeq` (one pass: the run is not driven here). */
  replay(runId: string, listener: (event: EngineEvent) => void, fromSeq: number): Promise<Subscription>;
}

export function runHistory(store: RecordStore): RunHistory {
  const sessionOf = async (runId: string): Promise<string> => {
    const sessionId = await store.findRun(runId);
    if (sessionId === null) {
      throw new WorkflowError("run_not_found", `no recorded run ${runId}`, {
        hint: "run IDs are 32 lowercase hex characters; list runs to find one",
      });
    }
    return sessionId;
  };
  const record = async (runId: string) => store.readRun(await sessionOf(runId), runId);

  return {
    async sessions() {
      const { sessions } = await store.listSessions();
      return Promise.all(
        sessions.map(async (s) => sessionSummary(s, (await store.listRuns(s.session_id)).length)),
      );
    },
    async runs(options = {}) {
      const ids =
        options.sessionId === undefined
          ? (await store.listSessions()).sessions.map((s) => s.session_id)
          : [(await store.loadSession(options.sessionId)).session_id];
      const all: RunSummary[] = [];
      for (const sessionId of ids) {
        for (const runId of await store.listRuns(sessionId)) {
          try {
            all.push(runSummary(await store.readRun(sessionId, runId)));
          } catch {
            // An unreadable run folder is left out of listings (`show` reports why).
          }
        }
      }
      return all.sort((a, b) => (a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0));
    },
    async show(runId) {
      const run = await record(runId);
      const failures = run.events.flatMap((event) => {
        if (event.type === "attempt_failed" && event.will_retry) {
          return [
            {
              node_id: event.node_id,
              activation_id: event.activation_id,
              attempt: event.attempt,
              final: false,
              error: event.error,
            },
          ];
        }
        if (event.type === "node_failed") {
          return [
            {
              node_id: event.node_id,
              activation_id: event.activation_id,
              attempt: event.attempt,
              final: true,
              error: event.error,
            },
          ];
        }
        return [];
      });
      return {
        run: runSummary(run),
        error: run.end?.error ?? "",
        error_class: run.end?.error_class ?? null,
        node_id: run.end?.node_id ?? "",
        inspection: fold(runId, run.events),
        failures,
        warnings: run.warnings,
      };
    },
    async logs(runId, options = {}) {
      const run = await record(runId);
      const wanted = (nodeId: string) => options.nodeId === undefined || nodeId === options.nodeId;
      return {
        run_id: runId,
        captured: run.diagnostics
          .filter((d: NodeDiagnostics) => wanted(d.node_id))
          .flatMap((d) =>
            d.phases.map((p) => ({
              node_id: d.node_id,
              activation_id: d.activation_id,
              attempt: d.attempt,
              phase: p.phase,
              stdout: p.stdout,
            })),
          ),
        emits: run.events.flatMap((e) =>
          e.type === "emit" && wanted(e.node_id)
            ? [
                {
                  node_id: e.node_id,
                  activation_id: e.activation_id,
                  attempt: e.attempt,
                  ts: e.ts,
                  text: e.text,
                },
              ]
            : [],
        ),
      };
    },
    async inspect(runId) {
      return fold(runId, (await record(runId)).events);
    },
    async replay(runId, listener, fromSeq) {
      const events = await store.readEvents(await sessionOf(runId), runId, fromSeq);
      let closed = false;
      for (const event of events) {
        if (closed) break;
        listener(event);
      }
      return { ready: Promise.resolve(), close: () => (closed = true) };
    },
  };
}

function fold(runId: string, events: readonly EngineEvent[]): RunInspection {
  const view = new RunView(runId);
  for (const event of events) view.apply(event);
  return view.snapshot();
}

function sessionSummary(session: Session, runs: number): SessionSummary {
  return {
    session_id: session.session_id,
    workflow_id: session.workflow_id,
    workflow_path: session.workflow_path,
    source: session.source,
    workspace: session.workspace,
    created_at: session.created_at,
    updated_at: session.updated_at,
    runs,
  };
}

function runSummary(run: RunRecord): RunSummary {
  const first = run.events[0];
  const end = run.end;
  return {
    run_id: run.header.run_id,
    session_id: run.header.session_id,
    workflow_id: run.header.workflow_id,
    state: end !== null ? "finished" : runProcessAlive(run.header) ? "running" : "interrupted",
    outcome: end?.outcome ?? null,
    reason: end?.reason ?? "",
    started_at: run.header.started_at,
    duration: end !== null && first !== undefined ? Math.max(0, end.ts - first.ts) / 1000 : null,
    location: run.dir,
  };
}
