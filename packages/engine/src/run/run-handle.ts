import type { RecordStore, RunRecorder } from "@icode/workflow-records";
import {
  type Answer,
  type CancelReason,
  type ControlResult,
  type EngineEvent,
  type EngineEventMap,
  type RunInspection,
  RunOutcomeSchema,
  RunView,
  type SkipOptions,
  type WorkflowRun,
} from "@icode/workflow-scheduler";
import { EventEmitter } from "eventemitter3";
import { z } from "zod";
import { RunRejectionCodeSchema, type RunReport } from "./report";

/** Every event type, plus `event` for a listener of all of them (`events.on("event", …)`). */
export type RunEventMap = EngineEventMap & { event: [EngineEvent] };

/** Where a run is, as the engine's registry lists it. */
export const RunStatusSchema = z.object({
  run_id: z.string(),
  workflow_id: z.string(),
  /** `null` until the run is accepted into a session (and for a refused run without one). */
  session_id: z.string().nullable(),
  state: z.enum(["admitting", "running", "paused", "finished", "rejected"]),
  outcome: RunOutcomeSchema.nullable(),
  /** Why it was refused, for `rejected`. */
  rejection: RunRejectionCodeSchema.nullable(),
  /** ISO 8601 UTC. */
  requested_at: z.string(),
  ended_at: z.string().nullable(),
  location: z.string().nullable(),
});
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** A subscription to a run's events; `ready` settles once the replay was delivered and it follows live. */
export interface Subscription {
  readonly ready: Promise<void>;
  close(): void;
}

/**
 * One run started through an engine, from the moment it is requested: watch it (`events`, `subscribe`),
 * look at it (`status`, `inspect`), answer its questions, control it. Control calls never throw: they
 * answer `{ ok: true }` or a refusal with a code. Before the run is accepted only `cancel` is possible.
 */
export interface RunHandle {
  readonly runId: string;
  readonly events: EventEmitter<RunEventMap>;
  readonly result: Promise<RunReport>;
  status(): RunStatus;
  /** Every activation's state and attempts, pending questions and approvals, outputs so far. */
  inspect(): Promise<RunInspection>;
  /** The run's events from `fromSeq` (default 0): replayed from its records, then live, in order, once each. */
  subscribe(listener: (event: EngineEvent) => void, options?: { fromSeq?: number }): Subscription;
  /** Answers a waiting question (`ask_id` of its `question` event): one answer per question asked. */
  answer(askId: string, answers: readonly Answer[]): ControlResult;
  /** Ends the run as `cancelled` (default reason `user_cancelled`); before it was accepted, refuses it. */
  cancel(reason?: CancelReason): ControlResult;
  pause(): ControlResult;
  resume(): ControlResult;
  retryNode(activationId: string): ControlResult;
  skipNode(activationId: string, options?: SkipOptions): ControlResult;
  approveNode(activationId: string): ControlResult;
}

const NOT_STARTED: ControlResult = {
  ok: false,
  code: "not_started",
  message: "the run has not been accepted yet; only cancel() is possible until then",
};

/** The engine's side of a run handle: the run path reports to it as the run goes. */
export class RunController implements RunHandle {
  readonly runId: string;
  readonly events = new EventEmitter<RunEventMap>();
  readonly result: Promise<RunReport>;
  /** Aborted by `cancel()` before the run is accepted, with the cancel reason. */
  readonly preparation = new AbortController();
  #status: RunStatus;
  #recorder: RunRecorder | null = null;
  #run: WorkflowRun | null = null;
  #view: Promise<RunView> | null = null;
  #resolve!: (report: RunReport) => void;
  #reject!: (error: unknown) => void;

  constructor(
    runId: string,
    workflowId: string,
    private readonly store: RecordStore,
  ) {
    this.runId = runId;
    this.#status = {
      run_id: runId,
      workflow_id: workflowId,
      session_id: null,
      state: "admitting",
      outcome: null,
      rejection: null,
      requested_at: new Date().toISOString(),
      ended_at: null,
      location: null,
    };
    this.result = new Promise<RunReport>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  // ------------------------------------------------------------ reported by the run path

  /** The run was accepted: its events go to `recorder`. */
  accepted(sessionId: string, recorder: RunRecorder): void {
    this.#recorder = recorder;
    this.#status = { ...this.#status, session_id: sessionId, location: recorder.location };
  }

  /** The scheduler runs it. */
  scheduled(run: WorkflowRun): void {
    this.#run = run;
    this.#status = { ...this.#status, state: "running" };
  }

  /** An event of the run, as it is stored: to live listeners (and the inspection, once someone asked). */
  emit(event: EngineEvent): void {
    if (event.type === "workflow_run_paused") this.#status = { ...this.#status, state: "paused" };
    else if (event.type === "workflow_run_resumed") this.#status = { ...this.#status, state: "running" };
    this.events.emit(event.type, event as never);
    this.events.emit("event", event);
  }

  /** The run is over: its report. What the run held is let go; its records stay readable. */
  settle(report: RunReport): void {
    const ended = new Date().toISOString();
    this.#status =
      report.status === "finished"
        ? { ...this.#status, state: "finished", outcome: report.outcome, ended_at: ended }
        : { ...this.#status, state: "rejected", rejection: report.code, ended_at: ended };
    this.#recorder = null;
    this.#run = null;
    this.#resolve(report);
  }

  /** A defect of the engine stopped the run: `result` rejects with it. */
  fail(error: unknown): void {
    this.#status = { ...this.#status, state: "finished", ended_at: new Date().toISOString() };
    this.#recorder = null;
    this.#run = null;
    this.#reject(error);
  }

  // ------------------------------------------------------------ RunHandle

  status(): RunStatus {
    return this.#status;
  }

  async inspect(): Promise<RunInspection> {
    this.#view ??= (async () => {
      const view = new RunView(this.runId);
      await this.follow(0, (event) => view.apply(event)).ready;
      return view;
    })();
    return (await this.#view).snapshot();
  }

  subscribe(listener: (event: EngineEvent) => void, options: { fromSeq?: number } = {}): Subscription {
    return this.follow(options.fromSeq ?? 0, listener);
  }

  answer(askId: string, answers: readonly Answer[]): ControlResult {
    return this.#run === null ? this.#refusal() : this.#run.answer(askId, answers);
  }

  cancel(reason: CancelReason = "user_cancelled"): ControlResult {
    if (this.#run !== null) return this.#run.cancel(reason);
    if (this.#status.state !== "admitting") return this.#refusal();
    this.preparation.abort(reason);
    return { ok: true };
  }

  pause(): ControlResult {
    return this.#run === null ? this.#refusal() : this.#run.pause();
  }

  resume(): ControlResult {
    return this.#run === null ? this.#refusal() : this.#run.resume();
  }

  retryNode(activationId: string): ControlResult {
    return this.#run === null ? this.#refusal() : this.#run.retryNode(activationId);
  }

  skipNode(activationId: string, options?: SkipOptions): ControlResult {
    return this.#run === null ? this.#refusal() : this.#run.skipNode(activationId, options);
  }

  approveNode(activationId: string): ControlResult {
    return this.#run === null ? this.#refusal() : this.#run.approveNode(activationId);
  }

  // ------------------------------------------------------------ replay, then live

  /**
   * Delivers the run's events from `fromSeq`: first those already stored (read back from the records), then
   * the live ones, each once and in order. Live events that arrive during the replay wait in a buffer.
   */
  private follow(fromSeq: number, deliver: (event: EngineEvent) => void): Subscription {
    let last = fromSeq - 1;
    let live = false;
    let closed = false;
    const buffer: EngineEvent[] = [];
    const pass = (event: EngineEvent) => {
      if (closed || event.seq <= last) return;
      last = event.seq;
      try {
        deliver(event);
      } catch {
        // A subscriber's failure is its own; it must not break the run or other subscribers.
      }
    };
    const listener = (event: EngineEvent) => (live ? pass(event) : buffer.push(event));
    this.events.on("event", listener);
    const ready = (async () => {
      for (const event of await this.#stored(fromSeq)) pass(event);
      for (const event of buffer) pass(event);
      buffer.length = 0;
      live = true;
    })();
    return {
      ready,
      close: () => {
        closed = true;
        this.events.off("event", listener);
      },
    };
  }

  async #stored(fromSeq: number): Promise<EngineEvent[]> {
    const recorder = this.#recorder;
    if (recorder !== null) {
      await recorder.flushPending();
      return recorder.readEvents(fromSeq);
    }
    const sessionId = this.#status.session_id;
    if (this.#status.state !== "finished" || sessionId === null) return [];
    return this.store.readEvents(sessionId, this.runId, fromSeq);
  }

  #refusal(): ControlResult {
    if (this.#status.state === "admitting") return NOT_STARTED;
    return { ok: false, code: "run_finished", message: `run ${this.runId} has already ended` };
  }
}
