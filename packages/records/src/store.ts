import { existsSync } from "node:fs";
import { join } from "node:path";
import { recordsError } from "./codes";
import type { EngineEvent } from "./engine-events";
import { readEventLog } from "./event-log";
import { type ExportFormat, exportTrajectory } from "./export/index";
import type { PerfettoTrace } from "./export/perfetto";
import type { Trajectory } from "./export/trajectory";
import { isRunId } from "./ids";
import { FILES, runDir, sessionDir } from "./layout";
import type { RunRecorder } from "./recorder";
import { type RecoveredRun, type RecoveryOptions, recoverOrphans } from "./recovery";
import { createRun, listRuns, type RunInit, type RunRecord, readRun } from "./run";
import {
  createSession,
  type ListSessionsFilter,
  type ListSessionsResult,
  listSessions,
  loadSession,
  type Session,
  type SessionInit,
  type SessionPatch,
  updateSession,
} from "./session";

/**
 * Where sessions and runs are kept: the engine writes runs only through this interface and the
 * `RunRecorder` it hands out, so another store (a database for a server) can be dropped in. The
 * file-system store (`createFsRecordStore`) is the one we ship; any other store must pass the same
 * conformance suite (`test/conformance/`). Methods reject with a `WorkflowError` carrying one of
 * `RECORDS_CODES`.
 */
export interface RecordStore {
  createSession(init: SessionInit): Promise<Session>;
  loadSession(sessionId: string): Promise<Session>;
  listSessions(filter?: ListSessionsFilter): Promise<ListSessionsResult>;
  updateSession(sessionId: string, patch: SessionPatch): Promise<Session>;
  createRun(sessionId: string, init: RunInit): Promise<RunRecorder>;
  /** The session's run IDs in start order, including runs its session file does not list (a crash). */
  listRuns(sessionId: string): Promise<string[]>;
  readRun(sessionId: string, runId: string): Promise<RunRecord>;
  /** A run's events with `seq >= fromSeq`, as stored (the full questions of asks put back). */
  readEvents(sessionId: string, runId: string, fromSeq?: number): Promise<EngineEvent[]>;
  /** The session that holds `runId`, or `null`. */
  findRun(runId: string): Promise<string | null>;
  recoverOrphans(sessionId: string, options?: RecoveryOptions): Promise<RecoveredRun[]>;
  exportTrajectory(sessionId: string, format: "json"): Promise<Trajectory>;
  exportTrajectory(sessionId: string, format: "perfetto"): Promise<PerfettoTrace>;
}

/** The file-system store under `<chrysHome>/sessions/` (layout in docs/records.md). */
export function createFsRecordStore(options: { chrysHome: string }): RecordStore {
  const home = options.chrysHome;
  const dirOf = (sessionId: string) => {
    loadSession(home, sessionId); // checks the ID and that the session exists
    return sessionDir(home, sessionId);
  };
  return {
    createSession: async (init) => createSession(home, init),
    loadSession: async (sessionId) => loadSession(home, sessionId),
    listSessions: async (filter) => listSessions(home, filter),
    updateSession: async (sessionId, patch) => updateSession(home, sessionId, patch),
    createRun: async (sessionId, init) => createRun(home, sessionId, init),
    listRuns: async (sessionId) => listRuns(home, sessionId),
    readRun: async (sessionId, runId) => readRun(home, sessionId, runId),
    async readEvents(sessionId, runId, fromSeq = 0) {
      if (!isRunId(runId)) {
        throw recordsError("invalid_id", `"${runId}" is not a run ID: expected 32 lowercase hex characters.`);
      }
      const dir = runDir(dirOf(sessionId), runId);
      if (!existsSync(join(dir, FILES.header))) {
        throw recordsError("run_not_found", `No run ${runId} in session ${sessionId}.`);
      }
      const { events } = readEventLog(join(dir, FILES.events));
      return fromSeq <= 0 ? events : events.filter((event) => event.seq >= fromSeq);
    },
    async findRun(runId) {
      if (!isRunId(runId)) return null;
      for (const session of listSessions(home).sessions) {
        if (existsSync(join(runDir(sessionDir(home, session.session_id), runId), FILES.header))) {
          return session.session_id;
        }
      }
      return null;
    },
    recoverOrphans: async (sessionId, recovery) => recoverOrphans(dirOf(sessionId), recovery ?? {}),
    exportTrajectory: (async (sessionId: string, format: ExportFormat) =>
      exportTrajectory(dirOf(sessionId), format)) as RecordStore["exportTrajectory"],
  };
}
