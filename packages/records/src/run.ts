import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Definition, DefinitionSchema } from "@icode/workflow-graph";
import { fsyncDir, writeFileAtomic, writeJsonAtomic } from "./atomic";
import { recordsError, storageFailed } from "./codes";
import { type NodeDiagnostics, readNodeDiagnostics } from "./diagnostics";
import { type EngineEvent, type RunOutput, type WorkflowValue, WorkflowValueSchema } from "./engine-events";
import { readEventLog } from "./event-log";
import { isRunId, newRunId } from "./ids";
import { readJsonFile } from "./json-file";
import { FILES, runDir, sessionDir } from "./layout";
import { processStartMarker } from "./process-marker";
import { FsRunRecorder } from "./recorder";
import {
  type EnvironmentRecord,
  EnvironmentRecordSchema,
  RUN_FORMAT,
  type RunDiagnostics,
  RunDiagnosticsSchema,
  type RunHeader,
  RunHeaderSchema,
  RunOutputsSchema,
} from "./run-files";
import { loadSession, saveSession } from "./session";
import { type SourceSnapshot, writeSourceSnapshot } from "./snapshot";
import { readTranscripts, type TranscriptRecord } from "./transcripts";

export interface RunInit {
  /** The ID the scheduler stamps on events; a new one when left out. 32 lowercase hex characters. */
  readonly run_id?: string;
  readonly definition: Definition;
  /**
   * `canonicalJson(definition)`, when the caller already has it (an engine digests the definition before
   * the run starts): written as is, so a large definition is not encoded twice.
   */
  readonly definitionJson?: string;
  readonly environment: EnvironmentRecord;
  readonly input: WorkflowValue;
  readonly source: SourceSnapshot;
  readonly engine_version: string;
  /** The process that runs the workflow; this process when left out. */
  readonly pid?: number;
}

/**
 * The name of a run folder while it is being made: `.<run_id>.<pid>.partial`. The folder is built complete
 * under this name and renamed into place, so a `<run_id>` folder always has its `run.json`; one of these left
 * by a process that died is removed by `recoverOrphans`.
 */
export function partialRunDirName(runId: string, pid: number): string {
  return `.${runId}.${pid}.partial`;
}

/**
 * Creates `<session>/workflows/<run_id>/` with its header, definition, environment, input and source
 * snapshot and an empty `events.jsonl`, adds the run to the session, and returns the recorder that appends
 * events. The folder appears whole (built under a temporary name, then renamed), and the run folders are the
 * truth: a crash before the session file lists the run still leaves a run that `listRuns` and recovery find.
 * Throws `storage_failed` when anything cannot be written (no run folder is left then).
 */
export function createRun(chrysHome: string, sessionId: string, init: RunInit): FsRunRecorder {
  const session = loadSession(chrysHome, sessionId);
  const runId = init.run_id ?? newRunId();
  if (!isRunId(runId)) {
    throw recordsError("invalid_id", `"${runId}" is not a run ID: expected 32 lowercase hex characters.`);
  }
  const sessionPath = sessionDir(chrysHome, sessionId);
  const runs = join(sessionPath, FILES.runs);
  const dir = runDir(sessionPath, runId);
  const pid = init.pid ?? process.pid;
  const partial = join(runs, partialRunDirName(runId, process.pid));
  try {
    mkdirSync(runs, { recursive: true });
  } catch (cause) {
    throw storageFailed("the runs folder", runs, cause);
  }
  if (existsSync(dir)) throw runExists(runId, sessionId, dir);
  try {
    mkdirSync(partial);
  } catch (cause) {
    throw storageFailed("the run folder", partial, cause);
  }
  try {
    const header: RunHeader = {
      format: RUN_FORMAT,
      run_id: runId,
      session_id: sessionId,
      workflow_id: session.workflow_id,
      started_at: new Date().toISOString(),
      pid,
      process_start: processStartMarker(pid),
      engine_version: init.engine_version,
    };
    writeJsonAtomic(join(partial, FILES.header), header, "the run header");
    if (init.definitionJson === undefined) {
      writeJsonAtomic(join(partial, FILES.definition), init.definition, "the graph definition");
    } else {
      writeFileAtomic(join(partial, FILES.definition), init.definitionJson, "the graph definition");
    }
    writeJsonAtomic(join(partial, FILES.environment), init.environment, "the resolved environment");
    writeJsonAtomic(join(partial, FILES.input), init.input, "the run input");
    writeSourceSnapshot(join(partial, FILES.source), init.source);
    try {
      renameSync(partial, dir);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (code === "EEXIST" || code === "ENOTEMPTY") throw runExists(runId, sessionId, dir);
      throw storageFailed("the run folder", dir, cause);
    }
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  fsyncDir(runs);
  const recorder = FsRunRecorder.create(dir, sessionId, runId);
  try {
    saveSession(chrysHome, { ...session, runs: [...session.runs.filter((id) => id !== runId), runId] });
  } catch (error) {
    // The run folder stays: it is a run of the session (see above), recorded as orphaned by the next
    // restore since no event will ever end it.
    void recorder.close().catch(() => undefined);
    throw error;
  }
  return recorder;
}

function runExists(runId: string, sessionId: string, dir: string) {
  return recordsError("run_exists", `Run ${runId} already exists in session ${sessionId} (${dir}).`, {
    hint: "Every run needs a new run ID.",
  });
}

/**
 * The session's run IDs in start order: those listed in `session.json`, then any run folder it does not
 * list (a crash between creating the folder and updating the session), by start time.
 */
export function listRuns(chrysHome: string, sessionId: string): string[] {
  const session = loadSession(chrysHome, sessionId);
  const folder = join(sessionDir(chrysHome, sessionId), FILES.runs);
  let names: string[] = [];
  try {
    names = readdirSync(folder).filter(isRunId);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== "ENOENT") throw cause;
  }
  const present = new Set(names);
  const listed = session.runs.filter((id) => present.has(id));
  const known = new Set(listed);
  const extra = names
    .filter((id) => !known.has(id))
    .map((id) => ({ id, at: readRunHeaderOrNull(join(folder, id))?.started_at ?? "" }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1))
    .map((entry) => entry.id);
  return [...listed, ...extra];
}

function readRunHeaderOrNull(dir: string): RunHeader | null {
  try {
    return readJsonFile(join(dir, FILES.header), RunHeaderSchema, "the run header");
  } catch {
    return null;
  }
}

export type { EnvironmentRecord, RunDiagnostics, RunHeader };

/** Everything a run directory holds, read back. Viewing a record never runs workflow code. */
export interface RunRecord {
  dir: string;
  header: RunHeader;
  definition: Definition;
  environment: EnvironmentRecord;
  input: WorkflowValue;
  /** `null` until the run is finished. */
  outputs: RunOutput[] | null;
  /** `output.json`, or `null` until the run is finished. */
  output: RunDiagnostics | null;
  events: EngineEvent[];
  /** The run's end event, or `null` while running, or when the process died (see `recoverOrphans`). */
  end: Extract<EngineEvent, { type: "workflow_run_end" }> | null;
  diagnostics: NodeDiagnostics[];
  /** The agent attempts' transcripts. */
  transcripts: TranscriptRecord[];
  /** Lines of `events.jsonl` that were skipped (a torn last line, …). */
  warnings: string[];
}

export function readRunDir(dir: string): RunRecord {
  const header = readJsonFile(join(dir, FILES.header), RunHeaderSchema, "the run header", { optional: true });
  if (header === null) {
    throw recordsError("run_not_found", `No run record in ${dir} (no ${FILES.header}).`);
  }
  const log = readEventLog(join(dir, FILES.events));
  let end: RunRecord["end"] = null;
  for (const event of log.events) if (event.type === "workflow_run_end") end = event;
  return {
    dir,
    header,
    definition: readJsonFile(join(dir, FILES.definition), DefinitionSchema, "the graph definition"),
    environment: readJsonFile(
      join(dir, FILES.environment),
      EnvironmentRecordSchema,
      "the resolved environment",
    ),
    input: readJsonFile(join(dir, FILES.input), WorkflowValueSchema, "the run input"),
    outputs: readJsonFile(join(dir, FILES.outputs), RunOutputsSchema, "the final outputs", {
      optional: true,
    }),
    output: readJsonFile(join(dir, FILES.output), RunDiagnosticsSchema, "the run output", { optional: true }),
    events: log.events,
    end,
    diagnostics: readNodeDiagnostics(dir),
    transcripts: readTranscripts(dir),
    warnings: log.warnings.map((w) => w.message),
  };
}

export function readRun(chrysHome: string, sessionId: string, runId: string): RunRecord {
  if (!isRunId(runId)) {
    throw recordsError("invalid_id", `"${runId}" is not a run ID: expected 32 lowercase hex characters.`);
  }
  loadSession(chrysHome, sessionId);
  return readRunDir(runDir(sessionDir(chrysHome, sessionId), runId));
}
