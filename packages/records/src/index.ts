/**
 * @module @icode/workflow-records
 * Sessions, run directories, `events.jsonl`, node diagnostics, orphan recovery, lifecycle hooks and
 * trajectory exports for iCode workflows. All I/O goes through `node:fs` under a `chrysHome` you pass in.
 *
 * @example
 * import { createFsRecordStore } from "@icode/workflow-records";
 * const store = createFsRecordStore({ chrysHome: "/home/me/.chrys" });
 * const session = await store.createSession({ workflow_id: "demo", workflow_path: "/p/.chrys/workflows/demo.py",
 *   source: "project", workspace: "/p" });
 * const recorder = await store.createRun(session.session_id, { definition, environment: {}, input: { text: "", data: null },
 *   source: { path: "/p/.chrys/workflows/demo.py" }, engine_version: "0.1.0" });
 * recorder.append(event); // the scheduler's RecordSink: one line of events.jsonl per event
 * recorder.finish({ outputs: [], output: { load: { text: "", truncated: false }, native: { text: "", dropped_bytes: 0 } } });
 * (await store.readRun(session.session_id, recorder.runId)).end?.outcome; // → "completed"
 */

export { canonicalJson } from "@icode/canonical-json";
export { writeFileAtomic, writeJsonAtomic } from "./atomic";
export { RECORDS_CODES, type RecordsCode, RecordsCodeSchema, type RecordsError } from "./codes";
export {
  CapturedTextSchema,
  DIAGNOSTIC_PHASES,
  DiagnosticPhaseSchema,
  diagnosticsFileName,
  type NodeDiagnostics,
  NodeDiagnosticsSchema,
  readNodeDiagnostics,
  recordHash,
  sanitizeForFileName,
  writeNodeDiagnostics,
} from "./diagnostics";
export {
  EventLog,
  type EventLogWarning,
  LARGE_STRINGS_FIELD,
  type ReadEventsResult,
  readEventLog,
} from "./event-log";
export { EXPORT_FORMATS, type ExportFormat, exportTrajectory } from "./export/index";
export {
  type PerfettoTrace,
  PerfettoTraceSchema,
  type TraceEvent,
  TraceEventSchema,
} from "./export/perfetto";
export {
  buildRun,
  type Trajectory,
  type TrajectoryAttempt,
  type TrajectoryNode,
  type TrajectoryRun,
  TrajectorySchema,
  type Usage,
  UsageSchema,
} from "./export/trajectory";
export { loadHooksConfig } from "./hooks/config";
export { type HookRunResult, type RunHooksOptions, runHooks } from "./hooks/run";
export {
  HOOK_EVENTS,
  HOOK_WARNING_CODES,
  type Hook,
  HookCommandSchema,
  type HookEvent,
  HookEventSchema,
  type HookFields,
  type HookInput,
  type HookPayload,
  type HookPayloadOf,
  HookPayloadSchema,
  HookSchema,
  type HooksConfig,
  HooksConfigSchema,
  type HookWarning,
  HookWarningSchema,
} from "./hooks/schema";
export { isRunId, isSessionId, newRunId, newSessionId, RunIdSchema, SessionIdSchema } from "./ids";
export { FILES, hooksFile, runDir, sessionDir, sessionsDir } from "./layout";
export { isProcessAlive, processStartMarker } from "./process-marker";
export { FsRunRecorder, type RunFinish, type RunRecorder } from "./recorder";
export { ORPHAN_ERROR_CLASS, type RecoveredRun, type RecoveryOptions, recoverOrphans } from "./recovery";
export {
  createRun,
  type EnvironmentRecord,
  EnvironmentRecordSchema,
  listRuns,
  RUN_FORMAT,
  type RunDiagnostics,
  RunDiagnosticsSchema,
  type RunHeader,
  RunHeaderSchema,
  type RunInit,
  type RunRecord,
  readRun,
  readRunDir,
} from "./run";
export {
  createSession,
  type ListSessionsFilter,
  type ListSessionsResult,
  listSessions,
  loadSession,
  SESSION_FORMAT,
  type Session,
  type SessionInit,
  SessionInitSchema,
  type SessionPatch,
  SessionPatchSchema,
  SessionSchema,
  type SessionSettings,
  SessionSettingsSchema,
  updateSession,
  type WorkflowSource,
  WorkflowSourceSchema,
} from "./session";
export { type SourceSnapshot, skippedInSnapshot, writeSourceSnapshot } from "./snapshot";
export { createFsRecordStore, type RecordStore } from "./store";
