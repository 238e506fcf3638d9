import type { RunRecorder } from "@icode/workflow-records";
import type { EngineEvent, RecordSink } from "@icode/workflow-scheduler";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event without the fields every event gets (`run_id`, `seq`, `ts`). */
export type EventBody = DistributiveOmit<EngineEvent, "run_id" | "seq" | "ts">;

/**
 * The run's one stream: the scheduler's events and the engine's own (`host`), numbered in one sequence,
 * stored through the run's recorder and then shown to live listeners. A storage failure outside the event
 * log (an attempt's captured output) makes the scheduler's next write fail, so the run ends `storage_failed`;
 * its end event still goes to the log, which may well be writable.
 */
export class HostSink implements RecordSink {
  /** The `seq` of the next event. */
  nextSeq = 0;
  private failure: unknown = null;

  constructor(
    private readonly runId: string,
    private readonly recorder: RunRecorder,
    private readonly show: (event: EngineEvent) => void,
  ) {}

  // ---------------------------------------------------------------- the scheduler's RecordSink

  write(event: EngineEvent): void {
    this.nextSeq = event.seq + 1;
    if (this.failure !== null && event.type !== "workflow_run_end") throw this.failure;
    this.recorder.write(event);
    this.show(event);
  }

  writeLast(event: EngineEvent): void {
    this.nextSeq = event.seq + 1;
    const pending = this.recorder.writeLast(event);
    if (pending !== undefined) pending.catch(() => undefined); // best effort: nothing more can be done
    this.show(event);
  }

  flush(): Promise<void> {
    return this.recorder.flush();
  }

  // ---------------------------------------------------------------- the engine's side

  /** Writes one of the engine's own events, next in the sequence. */
  host(body: EventBody): void {
    const event = { ...body, run_id: this.runId, seq: this.nextSeq++, ts: Date.now() } as EngineEvent;
    this.recorder.write(event);
    this.show(event);
  }

  /** An engine event after the run's end (a hook's warning): stored at once, not waiting for the turn. */
  after(body: EventBody): void {
    try {
      this.host(body);
      void Promise.resolve(this.recorder.flushPending()).catch(() => undefined);
    } catch {
      // The run has ended and its outcome is known; a warning that cannot be stored is shown nowhere.
    }
  }

  /** A corrective end after the run ended (its outputs could not be stored): the last try of the log. */
  async last(body: EventBody): Promise<void> {
    const event = { ...body, run_id: this.runId, seq: this.nextSeq++, ts: Date.now() } as EngineEvent;
    try {
      await this.recorder.writeLast(event);
    } catch {
      return; // nothing more can be written (docs/records.md)
    }
    this.show(event);
  }

  /** Before calls go out to the executor: what is queued is stored first (decision 0027). */
  storeQueued(): void {
    this.guard(() => this.recorder.flushPending());
  }

  /** Runs a store write on the executors' side; its failure ends the run with `storage_failed`. */
  guard(write: () => void | Promise<void>): void {
    try {
      const pending = write();
      if (pending !== undefined) pending.catch((error: unknown) => this.failed(error));
    } catch (error) {
      this.failed(error);
    }
  }

  async flushPending(): Promise<void> {
    await this.recorder.flushPending();
  }

  async close(): Promise<void> {
    await this.recorder.close();
  }

  private failed(error: unknown): void {
    this.failure ??= error;
  }
}
