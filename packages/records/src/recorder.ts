import { join } from "node:path";
import { writeJsonAtomic } from "./atomic";
import { recordsError } from "./codes";
import { type NodeDiagnostics, writeNodeDiagnostics } from "./diagnostics";
import { cutText, type EngineEvent, type RecordSink, type RunOutput, SUMMARY_LIMIT } from "./engine-events";
import { EventLog } from "./event-log";
import { FILES } from "./layout";
import type { RunDiagnostics, RunHeader } from "./run";

/** What a run leaves at its end: the final outputs and the run-level captured output. */
export interface RunFinish {
  readonly outputs: readonly RunOutput[];
  readonly output: RunDiagnostics;
}

/**
 * The scheduler's record sink for one run. `append` (alias `write`, the `RecordSink` method) writes one
 * event synchronously and in order; a failed write throws a `WorkflowError` coded `storage_failed`, which
 * the scheduler turns into the run's outcome. Nothing here exits or crashes the process.
 */
export interface RunRecorder extends RecordSink {
  readonly sessionId: string;
  readonly runId: string;
  append(event: EngineEvent): void;
  /** Saves one attempt's captured output; returns where, or `null` when there was nothing to save. */
  writeNodeDiagnostics(record: NodeDiagnostics): string | null;
  /** Writes `outputs.json` and `output.json` and closes the event log. */
  finish(result: RunFinish): void;
  /** Closes the event log without finishing (e.g. the run could not start). Idempotent. */
  close(): void;
}

/** The file-system `RunRecorder`: `<session>/workflows/<run_id>/`. */
export class FsRunRecorder implements RunRecorder {
  readonly dir: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly #log: EventLog;

  private constructor(dir: string, header: RunHeader, log: EventLog) {
    this.dir = dir;
    this.sessionId = header.session_id;
    this.runId = header.run_id;
    this.#log = log;
  }

  /** Internal to `createRun`: starts the run's empty event log. */
  static create(dir: string, header: RunHeader): FsRunRecorder {
    return new FsRunRecorder(dir, header, EventLog.create(join(dir, FILES.events)));
  }

  append(event: EngineEvent): void {
    if (event.run_id !== this.runId) {
      throw recordsError(
        "storage_failed",
        `Event ${event.seq} (${event.type}) belongs to run ${event.run_id}, but this recorder writes run ${this.runId}.`,
      );
    }
    this.#log.append(summarized(event));
  }

  write(event: EngineEvent): void {
    this.append(event);
  }

  /**
   * Like `append`, but the line is written with the others of this turn of the event loop (one write
   * instead of one per event: the scheduler emits several events per node). A failed write is thrown by a
   * later `appendSoon`, `flush` or `finish`; events appended before it stay readable.
   */
  appendSoon(event: EngineEvent): void {
    if (event.run_id !== this.runId) {
      throw recordsError(
        "storage_failed",
        `Event ${event.seq} (${event.type}) belongs to run ${event.run_id}, but this recorder writes run ${this.runId}.`,
      );
    }
    this.#log.appendSoon(summarized(event));
  }

  /** Writes the events `appendSoon` holds now (for example once a node's call went out). Throws `storage_failed`. */
  flushPending(): void {
    this.#log.flushPending();
  }

  async flush(): Promise<void> {
    this.#log.sync();
  }

  writeNodeDiagnostics(record: NodeDiagnostics): string | null {
    return writeNodeDiagnostics(this.dir, record);
  }

  finish(result: RunFinish): void {
    try {
      writeJsonAtomic(join(this.dir, FILES.outputs), result.outputs, "the final outputs");
      writeJsonAtomic(join(this.dir, FILES.output), result.output, "the run output");
    } finally {
      this.#log.close();
    }
  }

  close(): void {
    this.#log.close();
  }
}

/** Question and answer events keep a summary of at most 512 characters (spec `NodeContext.ask`). */
function summarized(event: EngineEvent): EngineEvent {
  if ((event.type === "question" || event.type === "answer") && event.summary.length > SUMMARY_LIMIT) {
    return { ...event, summary: cutText(event.summary, SUMMARY_LIMIT) };
  }
  return event;
}
