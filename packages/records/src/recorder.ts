import { join } from "node:path";
import { writeJsonAtomic } from "./atomic";
import { recordsError } from "./codes";
import { type NodeDiagnostics, writeNodeDiagnostics } from "./diagnostics";
import { cutText, type EngineEvent, type RecordSink, type RunOutput, SUMMARY_LIMIT } from "./engine-events";
import { EventLog, readEventLog } from "./event-log";
import { FILES } from "./layout";
import { appendQuestions } from "./questions";
import type { RunDiagnostics } from "./run-files";
import { type TranscriptRecord, writeTranscript } from "./transcripts";

/** What a run leaves at its end: the final outputs and the run-level captured output. */
export interface RunFinish {
  readonly outputs: readonly RunOutput[];
  readonly output: RunDiagnostics;
}

/**
 * Where one run's records go: the scheduler's sink (`write`) and everything else a run stores. Batching is
 * part of the contract: `write` only queues, and the store writes what is queued at the end of the turn of
 * the event loop, or when asked (`flushPending`), so a fan-out of thousands of nodes costs a few writes, and a
 * node's start is stored before its code runs. A store may do its I/O asynchronously: every method that
 * stores returns `void` or a promise, and a failure (a `WorkflowError` coded `storage_failed`) surfaces from
 * that call or a later one. The file-system recorder (`createFsRecordStore`) is synchronous.
 */
export interface RunRecorder extends RecordSink {
  readonly sessionId: string;
  readonly runId: string;
  /** Where the store keeps the run, for people (the file store: the run folder), or `null`. */
  readonly location: string | null;
  /** Queues one event, in order. Throws `storage_failed` when an earlier write of this run failed. */
  write(event: EngineEvent): void;
  /** Stores the queued events now (before a node's code runs). Throws or rejects with `storage_failed`. */
  flushPending(): void | Promise<void>;
  /** Makes what was stored durable (the file store: `fsync`). */
  flush(): Promise<void>;
  /** One last try, after a failure, to store `event` (the run's end) and what is queued before it. */
  writeLast(event: EngineEvent): void | Promise<void>;
  /** Stores one attempt's captured output. */
  writeNodeDiagnostics(record: NodeDiagnostics): void | Promise<void>;
  /** Stores one agent attempt's transcript. */
  writeTranscript(record: TranscriptRecord): void | Promise<void>;
  /** Stores the final outputs and the run-level output; the engine does this before the end event. */
  writeOutputs(finish: RunFinish): void | Promise<void>;
  /** The run's stored events with `seq >= fromSeq`, in order (queued ones once `flushPending` stored them). */
  readEvents(fromSeq?: number): Promise<EngineEvent[]>;
  /** Stores what is queued and closes. Idempotent; rejects with `storage_failed` when that last write fails. */
  close(): Promise<void>;
}

/** The file-system `RunRecorder`: `<session>/workflows/<run_id>/` (layout in ./layout). */
export class FsRunRecorder implements RunRecorder {
  readonly dir: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly #log: EventLog;
  /** Transcript writes still on their way to the disk: `flush` and `close` wait for them. */
  readonly #writing = new Set<Promise<void>>();

  private constructor(dir: string, sessionId: string, runId: string, log: EventLog) {
    this.dir = dir;
    this.sessionId = sessionId;
    this.runId = runId;
    this.#log = log;
  }

  /** Internal to `createRun`: starts the run's empty event log in its (complete) folder. */
  static create(dir: string, sessionId: string, runId: string): FsRunRecorder {
    return new FsRunRecorder(dir, sessionId, runId, EventLog.create(join(dir, FILES.events)));
  }

  get location(): string {
    return this.dir;
  }

  write(event: EngineEvent): void {
    this.#log.appendSoon(this.#stored(event));
  }

  flushPending(): void {
    this.#log.flushPending();
  }

  async flush(): Promise<void> {
    const failure = await this.#settle();
    this.#log.sync();
    if (failure !== null) throw failure;
  }

  writeLast(event: EngineEvent): void {
    this.#log.appendLast(this.#stored(event));
  }

  writeNodeDiagnostics(record: NodeDiagnostics): void {
    writeNodeDiagnostics(this.dir, record);
  }

  writeTranscript(record: TranscriptRecord): Promise<void> {
    const writing = writeTranscript(this.dir, record);
    this.#writing.add(writing);
    const done = () => this.#writing.delete(writing);
    writing.then(done, done);
    return writing;
  }

  writeOutputs(finish: RunFinish): void {
    writeJsonAtomic(join(this.dir, FILES.outputs), finish.outputs, "the final outputs");
    writeJsonAtomic(join(this.dir, FILES.output), finish.output, "the run output");
  }

  async readEvents(fromSeq = 0): Promise<EngineEvent[]> {
    const { events } = readEventLog(join(this.dir, FILES.events));
    return fromSeq <= 0 ? events : events.filter((event) => event.seq >= fromSeq);
  }

  async close(): Promise<void> {
    // A failed transcript write was reported to whoever started it (the run ends `storage_failed`).
    await this.#settle();
    this.#log.close();
  }

  /** Waits for the transcript writes under way; the first failure among them, or null. */
  async #settle(): Promise<unknown> {
    const outcomes = await Promise.allSettled([...this.#writing]);
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    return failed === undefined ? null : (failed as PromiseRejectedResult).reason;
  }

  /**
   * The event as the log keeps it: question and answer summaries cut to 512 characters (spec `NodeContext.ask`)
   * and a question's full questions stored beside the log (./questions), not in it.
   */
  #stored(event: EngineEvent): EngineEvent {
    if (event.run_id !== this.runId) {
      throw recordsError(
        "storage_failed",
        `Event ${event.seq} (${event.type}) belongs to run ${event.run_id}, but this recorder writes run ${this.runId}.`,
      );
    }
    if (event.type === "question") {
      appendQuestions(join(this.dir, FILES.questions), event.ask_id, event.questions);
      const { questions: _full, ...kept } = event;
      return { ...kept, summary: cutText(event.summary, SUMMARY_LIMIT) } as EngineEvent;
    }
    if (event.type === "answer" && event.summary.length > SUMMARY_LIMIT) {
      return { ...event, summary: cutText(event.summary, SUMMARY_LIMIT) };
    }
    return event;
  }
}
