import { type ExportFormat, exportTrajectory } from "./export/index";
import type { PerfettoTrace } from "./export/perfetto";
import type { Trajectory } from "./export/trajectory";
import { sessionDir } from "./layout";
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
 * Where sessions and runs are kept. The file-system store (`createFsRecordStore`) is the one we ship; any
 * other store must pass the same conformance suite (`test/conformance/`). Methods reject with a
 * `WorkflowError` carrying one of `RECORDS_CODES`; the recorder a run gets is synchronous, as the
 * scheduler's sink must be.
 */
export interface RecordStore {
  createSession(init: SessionInit): Promise<Session>;
  loadSession(sessionId: string): Promise<Session>;
  listSessions(filter?: ListSessionsFilter): Promise<ListSessionsResult>;
  updateSession(sessionId: string, patch: SessionPatch): Promise<Session>;
  createRun(sessionId: string, init: RunInit): Promise<RunRecorder>;
  listRuns(sessionId: string): Promise<string[]>;
  readRun(sessionId: string, runId: string): Promise<RunRecord>;
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
    recoverOrphans: async (sessionId, recovery) => recoverOrphans(dirOf(sessionId), recovery ?? {}),
    exportTrajectory: (async (sessionId: string, format: ExportFormat) =>
      exportTrajectory(dirOf(sessionId), format)) as RecordStore["exportTrajectory"],
  };
}
