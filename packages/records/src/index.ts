/**
 * @module @icode/workflow-records
 * Where runs are recorded: sessions, run folders, `events.jsonl`, node diagnostics, orphan recovery,
 * lifecycle hooks and trajectory exports. The engine writes only through `RecordStore` and the `RunRecorder`
 * it hands out; `createFsRecordStore` keeps them under `<chrysHome>/sessions/` (docs/records.md), and any
 * other store must pass the conformance suite in `test/conformance/`.
 *
 * @example
 * import { createFsRecordStore } from "@icode/workflow-records";
 * const store = createFsRecordStore({ chrysHome: "/home/me/.chrys" });
 * const session = await store.createSession({ workflow_id: "demo", workflow_path: "/p/.chrys/workflows/demo.py",
 *   source: "project", workspace: "/p" });
 * const recorder = await store.createRun(session.session_id, { definition, environment: {}, input, source, engine_version });
 * recorder.write(event); // the scheduler's RecordSink; queued, stored at the end of the turn
 * await recorder.close();
 * (await store.readRun(session.session_id, recorder.runId)).end?.outcome; // → "completed"
 */
export { RECORDS_CODES, type RecordsCode, RecordsCodeSchema } from "./codes";
export { type NodeDiagnostics, NodeDiagnosticsSchema } from "./diagnostics";
export { type ReadEventsResult, readEventLog } from "./event-log";
export { EXPORT_FORMATS, type ExportFormat } from "./export/index";
export { type PerfettoTrace, PerfettoTraceSchema } from "./export/perfetto";
export { type Trajectory, TrajectorySchema, type Usage, UsageSchema } from "./export/trajectory";
export { type HookRunResult, runHooks } from "./hooks/run";
export {
  HOOK_EVENTS,
  HOOK_WARNING_CODES,
  type HookEvent,
  type HookWarning,
  HookWarningSchema,
} from "./hooks/schema";
export { isRunId, isSessionId, newRunId, RunIdSchema, SessionIdSchema } from "./ids";
export { runProcessAlive } from "./process-marker";
export type { RunFinish, RunRecorder } from "./recorder";
export { ORPHAN_ERROR_CLASS, type RecoveredRun, type RecoveryOptions } from "./recovery";
export type { RunInit, RunRecord } from "./run";
export {
  type EnvironmentRecord,
  type RunDiagnostics,
  RunDiagnosticsSchema,
  RunHeaderSchema,
} from "./run-files";
export type { SessionInit, SessionPatch, SessionSettings, WorkflowSource } from "./session";
export { type ListSessionsFilter, type ListSessionsResult, type Session, SessionSchema } from "./session";
export type { SourceSnapshot } from "./snapshot";
export { createFsRecordStore, type RecordStore } from "./store";
export { type TranscriptRecord, TranscriptRecordSchema } from "./transcripts";
