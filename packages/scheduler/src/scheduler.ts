import { combineInputBytes, mergeSources } from "@icode/workflow-graph";
import { Activation, Call, type Pool, type Received, type Status } from "./activation";
import type { AgentActivity } from "./activity";
import { AskDesk, type AskHost } from "./asks";
import { AttemptChannel, type AttemptHost } from "./attempt-io";
import {
  type CancelReason,
  type ControlErrorCode,
  type FailurePhase,
  NEVER_RETRIED_CLASSES,
  type NodeCancelReason,
  type RunOutcome,
  type SkipReason,
} from "./codes";
import { SchedulerError } from "./errors";
import { type EngineEvent, type EngineEventOf, EngineEventSchema } from "./events";
import type {
  AttemptResult,
  CombineResult,
  ConditionsResult,
  EdgeDecisions,
  NodeError,
  UntilResult,
} from "./executor";
import { failureAction, failureOutcome } from "./failure-policy";
import type { IndexedEdge, IndexedNode } from "./graph-index";
import type { AskRequest, AskResponse, PendingAsk } from "./interaction";
import {
  COMBINE_INPUT_LIMIT_BYTES,
  COMBINE_TIMEOUT_MS,
  CONDITION_TIMEOUT_MS,
  UNTIL_TIMEOUT_MS,
} from "./limits";
import type { ResolvedRun, WorkflowRun } from "./options";
import { callExecutor, sourceValues, type Work } from "./requests";
import type { ActivationState, ControlResult, RunResult } from "./result";
import type { RunOutput, WorkflowValue } from "./value";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event without the fields every event gets (`run_id`, `seq`, `ts`). */
type EventBody = DistributiveOmit<EngineEvent, "run_id" | "seq" | "ts">;

/** How a run ends. */
interface Ending {
  readonly outcome: RunOutcome;
  readonly reason: CancelReason | "";
  readonly act: Activation | null;
  readonly error: string;
  readonly errorClass: string | null;
}

type LoopNode = Extract<IndexedNode["node"], { kind: "loop" }>;

const NODE_CANCEL_REASON: Record<RunOutcome, NodeCancelReason> = {
  completed: "run_failed",
  orphaned: "run_failed",
  node_failed: "run_failed",
  loop_exhausted: "run_failed",
  cancelled: "user_cancelled",
  worker_lost: "worker_lost",
  storage_failed: "storage_failed",
};

/** Each event type's keys in code point order (see `emit`). */
const EVENT_KEYS: ReadonlyMap<string, readonly string[]> = new Map(
  EngineEventSchema.options.map((schema) => [schema.shape.type.value, Object.keys(schema.shape).sort()]),
);

const OK: ControlResult = { ok: true };
const COMPLETED: Ending = { outcome: "completed", reason: "", act: null, error: "", errorClass: null };

/**
 * One run. Single-threaded and event-driven: every entry point (start, an executor settling, a timer, a
 * control call) goes through `enter`, which runs the change and then drains the ready queue, so nothing
 * recurses per node and nothing re-enters. Per node the work is O(in-degree + out-degree); no operation
 * scans the graph.
 */
export class RunScheduler implements AttemptHost, AskHost {
  private readonly runId: string;
  private readonly nodes: readonly IndexedNode[];
  /** The current activation of each node (the current iteration's, for body nodes). */
  private readonly current: (Activation | undefined)[];
  private liveHead: Activation | null = null;
  private liveTail: Activation | null = null;
  private readonly ready: Activation[] = [];
  private readyHead = 0;
  private readonly deferred: (() => void)[] = [];
  private deferredHead = 0;
  private pumping = false;
  private readonly agents: Pool;
  private readonly python: Pool;
  private held: Activation[] = [];
  private topUnsettled: number;
  /** Executor calls in flight. */
  private busy = 0;
  private seq: number;
  private paused = false;
  /** `fail_fast` after a failure: nothing new starts. */
  private failing = false;
  private firstFailure: Ending | null = null;
  private ended = false;
  /** The end event has been written: nothing more is. */
  private closed = false;
  private sinkError: unknown = null;
  /** The end event after a sink failure goes to `RecordSink.writeLast` when the sink has one. */
  private lastTry = false;
  private deadlineTimer: { cancel(): void } | null = null;
  private readonly asks: AskDesk;
  private resolveResult!: (result: RunResult) => void;
  private rejectResult!: (error: unknown) => void;
  readonly result: Promise<RunResult>;

  constructor(private readonly run: ResolvedRun) {
    this.runId = run.options.runId;
    this.nodes = run.index.nodes;
    this.current = new Array(this.nodes.length);
    this.topUnsettled = run.index.topLevelCount;
    this.agents = { limit: run.agentLimit, active: 0, queue: [], head: 0 };
    this.python = { limit: run.pythonLimit, active: 0, queue: [], head: 0 };
    this.seq = run.options.firstSeq ?? 0;
    this.asks = new AskDesk(this, run.options.ask, run.options.acceptAnswers === true);
    this.result = new Promise<RunResult>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
  }

  // ================================================================ control surface

  handle(): WorkflowRun {
    return {
      runId: this.runId,
      result: this.result,
      cancel: (reason = "user_cancelled") =>
        this.control(() => {
          this.enter(() =>
            this.end({ outcome: "cancelled", reason, act: null, error: "", errorClass: null }),
          );
          return OK;
        }),
      pause: () =>
        this.control(() => {
          if (this.paused) return refuse("already_paused", "the run is already paused");
          this.paused = true;
          this.enter(() => this.emit({ type: "workflow_run_paused" }));
          return OK;
        }),
      resume: () =>
        this.control(() => {
          if (!this.paused) return refuse("not_paused", "the run is not paused; nothing to resume");
          this.paused = false;
          this.enter(() => this.onResume());
          return OK;
        }),
      retryNode: (activationId) =>
        this.control(() => {
          const act = this.find(activationId, "awaiting_retry", "not_awaiting_retry");
          if (!(act instanceof Activation)) return act;
          this.enter(() => this.retry(act));
          return OK;
        }),
      skipNode: (activationId, options = {}) =>
        this.control(() => {
          const act = this.find(activationId, null, "not_skippable");
          if (!(act instanceof Activation)) return act;
          if (act.status === "looping") {
            return refuse(
              "not_skippable",
              `${activationId} is a loop whose body is running; skip or retry the body node instead`,
            );
          }
          this.enter(() => this.userSkip(act, options.note ?? null, options.value ?? null));
          return OK;
        }),
      approveNode: (activationId) =>
        this.control(() => {
          const act = this.find(activationId, "waiting_approval", "not_waiting_approval");
          if (!(act instanceof Activation)) return act;
          this.enter(() => {
            if (act.status !== "waiting_approval") return;
            act.approved = true;
            this.emit({ type: "node_approved", ...ref(act) });
            this.requestAttempt(act);
          });
          return OK;
        }),
      answer: (askId, answers) => this.control(() => this.asks.answer(askId, answers)),
      pendingAsks: () => this.asks.pending(),
      inspect: () => {
        const activations = [];
        for (let a = this.liveHead; a !== null; a = a.next) {
          activations.push({
            node_id: a.n.id,
            activation_id: a.id,
            state: a.status as ActivationState,
            attempts: a.attempt,
          });
        }
        return {
          run_id: this.runId,
          state: this.ended ? "finished" : this.paused ? "paused" : "running",
          activations,
        };
      },
    };
  }

  private control(op: () => ControlResult): ControlResult {
    if (this.ended) return refuse("run_finished", `run ${this.runId} has already ended`);
    return op();
  }

  /** The live activation named `activationId`, in `state` when given; else a refusal. */
  private find(
    activationId: string,
    state: ActivationState | null,
    wrongState: ControlErrorCode,
  ): Activation | ControlResult {
    const at = activationId.lastIndexOf("@iter#");
    const node = at < 0 ? undefined : this.run.index.byId.get(activationId.slice(0, at));
    if (node === undefined) {
      return refuse(
        "unknown_activation",
        `no activation ${activationId} in run ${this.runId}; activation IDs look like "<node_id>@iter#<n>"`,
      );
    }
    const act = this.current[node.index];
    if (act === undefined || act.id !== activationId || !act.live) {
      return refuse(wrongState, `${activationId} has not begun or has already settled`);
    }
    if (state !== null && act.status !== state) {
      return refuse(wrongState, `${activationId} is ${act.status}, not ${state}`);
    }
    return act;
  }

  // ================================================================ the pump

  /** Runs `fn` and everything it makes ready; calls made while pumping are queued, never nested. */
  enter(fn: () => void): void {
    if (this.pumping) {
      this.deferred.push(fn);
      return;
    }
    this.pumping = true;
    try {
      fn();
      this.drain();
    } catch (error) {
      this.crash(error);
    } finally {
      this.pumping = false;
    }
  }

  private drain(): void {
    for (;;) {
      if (this.ended) {
        this.deferred.length = 0;
        this.deferredHead = 0;
        return;
      }
      if (this.sinkError !== null) {
        const error = `run records could not be written: ${describe(this.sinkError)}`;
        this.end({ outcome: "storage_failed", reason: "", act: null, error, errorClass: null });
      } else if (this.readyHead < this.ready.length) {
        const act = this.ready[this.readyHead++]!;
        if (this.readyHead === this.ready.length) {
          this.ready.length = 0;
          this.readyHead = 0;
        }
        this.resolve(act);
      } else if (this.deferredHead < this.deferred.length) {
        const fn = this.deferred[this.deferredHead++]!;
        if (this.deferredHead === this.deferred.length) {
          this.deferred.length = 0;
          this.deferredHead = 0;
        }
        fn();
      } else if (this.failing && this.busy === 0) {
        this.end(this.firstFailure!);
      } else if (this.topUnsettled === 0) {
        this.end(this.firstFailure ?? COMPLETED);
      } else {
        return;
      }
    }
  }

  /** A defect of the scheduler itself: stop everything and reject `result`. */
  private crash(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.closed = true;
    this.deadlineTimer?.cancel();
    for (let a = this.liveHead; a !== null; a = a.next) this.stopWork(a, "internal_error");
    this.rejectResult(
      new SchedulerError("internal_error", `the scheduler failed: ${describe(error)}`, { cause: error }),
    );
  }

  // ================================================================ events

  /** Writes one event; a throwing sink ends the run with `storage_failed` at the next step. */
  private write(event: EngineEvent): void {
    if (this.closed || this.sinkError !== null) {
      this.unstamp(event);
      return;
    }
    try {
      const sink = this.run.options.sink;
      if (this.lastTry && sink.writeLast !== undefined) sink.writeLast(event);
      else sink.write(event);
    } catch (error) {
      this.sinkError = error;
      this.unstamp(event);
    }
  }

  /** An event that was not stored gives its `seq` back: the stored events stay numbered without gaps. */
  private unstamp(event: EngineEvent): void {
    if (event.seq === this.seq - 1) this.seq--;
  }

  /**
   * Writes an event with its keys in code point order. The records write events as canonical JSON (sorted
   * keys), and an object whose keys already enumerate in that order, down to the values it carries, goes to
   * the native `JSON.stringify` at about half the cost; the events of every node are built that way by hand
   * (`begin`, `startAttempt`, `finish`), the others here.
   */
  private emit(body: EventBody): void {
    if (this.closed) return;
    this.write(this.stamp(body));
  }

  /** The event of `body`, with the next `seq` and the clock's time, its keys in code point order. */
  private stamp(body: EventBody): EngineEvent {
    const fields = body as unknown as Record<string, unknown>;
    const seq = this.seq++;
    const ts = this.run.options.clock.now();
    const event: Record<string, unknown> = {};
    for (const key of EVENT_KEYS.get(body.type)!) {
      event[key] = key === "run_id" ? this.runId : key === "seq" ? seq : key === "ts" ? ts : fields[key];
    }
    return event as EngineEvent;
  }

  private live(act: Activation): void {
    act.live = true;
    act.prev = this.liveTail;
    act.next = null;
    if (this.liveTail === null) this.liveHead = act;
    else this.liveTail.next = act;
    this.liveTail = act;
  }

  private unlive(act: Activation): void {
    if (!act.live) return;
    act.live = false;
    if (act.prev === null) this.liveHead = act.next;
    else act.prev.next = act.next;
    if (act.next === null) this.liveTail = act.prev;
    else act.next.prev = act.prev;
    act.prev = null;
    act.next = null;
  }

  // ================================================================ start and end

  start(): void {
    const { definition, input, deadline, clock } = this.run.options;
    this.enter(() => {
      this.emit({
        type: "workflow_run_start",
        title: definition.title,
        start: definition.start,
        input,
        policy: this.run.policy,
        deadline: deadline ?? null,
        node_count: this.nodes.length,
        edge_count: this.run.index.edgeCount,
        outputs: definition.outputs,
      });
      if (deadline !== undefined && deadline !== null) {
        const delay = deadline - clock.now();
        const cancel = () =>
          this.end({
            outcome: "cancelled",
            reason: "deadline_exceeded",
            act: null,
            error: "",
            errorClass: null,
          });
        if (delay <= 0) {
          cancel();
          return;
        }
        this.deadlineTimer = clock.setTimer(delay, () => this.enter(cancel));
      }
      const start = this.nodes[this.run.index.start]!;
      const act = new Activation(start, 1, null);
      this.current[start.index] = act;
      this.begin(act, [{ node_id: "", activationId: null, value: input }]);
    });
  }

  private end(ending: Ending): void {
    if (this.ended) return;
    this.ended = true;
    this.deadlineTimer?.cancel();
    const reason: NodeCancelReason =
      ending.outcome === "cancelled" && ending.reason !== ""
        ? ending.reason
        : NODE_CANCEL_REASON[ending.outcome];
    // Innermost first: body activations began after their loop.
    for (let a = this.liveTail; a !== null; ) {
      const prev = a.prev;
      this.unlive(a);
      this.cancelActivation(a, reason);
      a = prev;
    }
    this.held = [];
    this.agents.queue.length = 0;
    this.python.queue.length = 0;

    const outputs: RunOutput[] = [];
    for (const i of this.run.index.outputs) {
      const act = this.current[i];
      if (act === undefined || act.status !== "completed" || act.substituted || act.value === null) continue;
      outputs.push({ node_id: act.n.id, activation_id: act.id, text: act.value.text, data: act.value.data });
    }
    const result: RunResult = {
      run_id: this.runId,
      outcome: ending.outcome,
      reason: ending.reason,
      node_id: ending.act === null ? "" : ending.act.n.id,
      error: ending.error,
      activation_id: ending.act === null ? null : ending.act.id,
      error_class: ending.errorClass,
      outputs,
    };
    // After a sink failure, one last best-effort attempt to record the end.
    const failedBefore = this.sinkError !== null;
    this.sinkError = null;
    this.lastTry = failedBefore;
    this.emit({ type: "workflow_run_end", ...result });
    this.closed = true;
    if (this.sinkError !== null && !failedBefore) {
      this.endFailed(result, this.sinkError);
      return;
    }
    const sink = this.run.options.sink;
    if (failedBefore || sink.flush === undefined) {
      this.resolveResult(result);
      return;
    }
    let flushed: Promise<void>;
    try {
      flushed = Promise.resolve(sink.flush());
    } catch (error) {
      flushed = Promise.reject(error);
    }
    flushed.then(
      () => this.resolveResult(result),
      (error: unknown) => this.endFailed(result, error),
    );
  }

  /**
   * Recording the end failed: the run's outcome is `storage_failed`. A sink that can take one last write
   * records that end too (after whatever it kept: a batch that failed is usually cut back whole), so the log
   * tells the truth when it can still be written; readers take a run's last end event.
   */
  private endFailed(result: RunResult, error: unknown): void {
    const failed = storageFailed(result, error);
    const sink = this.run.options.sink;
    if (sink.writeLast !== undefined) {
      try {
        sink.writeLast(this.stamp({ type: "workflow_run_end", ...failed }));
        void Promise.resolve(sink.flush?.()).catch(() => undefined);
      } catch {
        // Nothing more can be written; docs/records.md says what is left then.
      }
    }
    this.resolveResult(failed);
  }

  private cancelActivation(act: Activation, reason: NodeCancelReason): void {
    const running = act.inflight && act.status === "running" ? act.attempt : null;
    this.stopWork(act, reason);
    act.status = "cancelled";
    act.waitingIn = null;
    this.emit({ type: "node_cancelled", ...ref(act), reason, attempt: running });
  }

  // ================================================================ inputs and edges

  /** Records the decision of one edge at its destination; the destination is ready once all have decided. */
  private decide(edge: IndexedEdge, src: Activation, value: WorkflowValue | null, poison: boolean): void {
    let dst = this.current[edge.dst];
    if (dst === undefined) {
      // Top-level activations begin to exist with their first decided edge; body ones at iteration start.
      dst = new Activation(this.nodes[edge.dst]!, 1, null);
      this.current[edge.dst] = dst;
    }
    if (value !== null) {
      if (dst.inputs === null) dst.inputs = new Array(dst.n.incoming.length);
      dst.inputs[edge.pos] = { node_id: src.n.id, activationId: src.id, value };
      dst.received++;
    }
    if (poison) dst.poisoned++;
    if (--dst.pending === 0) this.ready.push(dst);
  }

  /** Decides every outgoing edge of `act`: conditional ones pass when in `passed`. */
  private propagate(
    act: Activation,
    value: WorkflowValue | null,
    passed: ReadonlySet<string> | null,
    poison: boolean,
  ): void {
    for (const edge of act.n.outgoing) {
      const passes = value !== null && (!edge.conditional || passed?.has(edge.key) === true);
      this.decide(edge, act, passes ? value : null, poison);
    }
  }

  /** Every incoming edge has decided: cancel, skip or begin. */
  private resolve(act: Activation): void {
    if (act.status !== "pending") return;
    if (this.failing) {
      this.cancelActivation(act, "run_failed");
    } else if (act.poisoned > 0) {
      act.status = "cancelled";
      this.emit({ type: "node_cancelled", ...ref(act), reason: "upstream_failed", attempt: null });
      this.propagate(act, null, null, true);
      this.settle(act);
    } else if (act.received === 0) {
      this.skip(act, "no_input", null);
    } else {
      const received: Received[] = [];
      for (const item of act.inputs!) if (item !== undefined) received.push(item);
      this.begin(act, received);
    }
  }

  private begin(act: Activation, received: Received[]): void {
    const node = act.n.node;
    const input = mergeSources(received)!;
    act.input = input;
    act.inputs = node.kind === "join" && node.has_combine ? received : null;
    this.live(act);
    const sources: string[] = [];
    for (const r of received) if (r.activationId !== null) sources.push(r.activationId);
    // The events of every node are built with their keys in order (see `emit`).
    this.write({
      activation_id: act.id,
      input,
      iteration: act.iteration,
      kind: node.kind,
      loop_id: act.loopId,
      node_id: act.n.id,
      run_id: this.runId,
      seq: this.seq++,
      sources,
      ts: this.run.options.clock.now(),
      type: "node_started",
    });
    if (node.kind === "python" || node.kind === "agent") {
      this.requestAttempt(act);
    } else if (node.kind === "loop") {
      act.loop = {
        iteration: 0,
        unsettled: 0,
        bodyFailed: 0,
        entryInput: { node_id: act.n.id, activationId: act.id, value: input },
        exitValue: null,
        exitActivation: "",
      };
      this.startIteration(act, 1, false);
    } else if (node.has_combine) {
      this.callCombine(act);
    } else {
      this.returned(act, input, null);
    }
  }

  // ================================================================ settling

  private settle(act: Activation): void {
    this.unlive(act);
    const loopAct = act.loopAct;
    if (loopAct === null) {
      this.topUnsettled--;
      // Nothing reads a settled top-level activation again unless it is an output: let it go.
      if (!act.n.isOutput) this.current[act.n.index] = undefined;
      return;
    }
    const loop = loopAct.loop!;
    if (--loop.unsettled === 0) this.iterationDone(loopAct);
  }

  private skip(act: Activation, reason: SkipReason, note: string | null): void {
    act.status = "skipped";
    act.input = null;
    this.emit({ type: "node_skipped", ...ref(act), reason, note, value: null });
    this.propagate(act, null, null, false);
    this.settle(act);
  }

  /** `act` produced `value` (function, agent, combine, merge, loop, or a skip's substitute): decide edges. */
  private returned(act: Activation, value: WorkflowValue, decisions: EdgeDecisions | null): void {
    act.value = value;
    if (act.n.conditions === null) this.finish(act, null);
    else if (decisions !== null) this.applyDecisions(act, decisions);
    else this.startConditions(act);
  }

  private finish(act: Activation, passed: ReadonlySet<string> | null): void {
    const value = act.value!;
    const kind = act.n.node.kind;
    act.status = "completed";
    act.input = null;
    act.inputs = null;
    if (act.substituted) {
      this.emit({ type: "node_skipped", ...ref(act), reason: "user_skipped", note: act.note, value });
    } else {
      this.write({
        activation_id: act.id,
        attempt: kind === "python" || kind === "agent" ? act.valueAttempt : null,
        iteration: act.iteration,
        kind,
        loop_id: act.loopId,
        node_id: act.n.id,
        run_id: this.runId,
        seq: this.seq++,
        ts: this.run.options.clock.now(),
        type: "node_completed",
        value,
      });
    }
    if (passed !== null) {
      const blocked: string[] = [];
      for (const key of act.n.conditionKeys!) if (!passed.has(key)) blocked.push(key);
      this.emit({ type: "edges_decided", ...ref(act), passed: [...passed], blocked });
    }
    // Keep the value only where it is read later: outputs and loop exits.
    const loopAct = act.loopAct;
    if (!act.n.isOutput && (loopAct === null || loopAct.n.exit !== act.n.index)) act.value = null;
    this.propagate(act, value, passed, false);
    this.settle(act);
  }

  // ================================================================ work in flight

  /**
   * Calls the executor for `work` on `act`: arms its limit, counts it in flight, and routes the settled
   * promise (or the timeout) back through the pump. Late settlements of ended work are dropped by the
   * token check.
   */
  private launch(act: Activation, work: Work, status: Status, limitMs: number | null): void {
    const token = ++act.token;
    const call = work === "attempt" ? new AttemptChannel(this, act, token) : new Call();
    act.status = status;
    act.call = call;
    act.inflight = true;
    this.busy++;
    if (limitMs !== null) this.arm(act, token, work, limitMs);
    let promise: Promise<unknown>;
    try {
      promise = Promise.resolve(callExecutor(this.runId, this.run.options.executors, act, work, call));
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => this.settled(act, token, work, result, true),
      (error: unknown) => this.settled(act, token, work, error, false),
    );
  }

  private settled(act: Activation, token: number, work: Work, payload: unknown, ok: boolean): void {
    if (this.ended || act.token !== token || !act.inflight) return;
    this.enter(() => {
      if (act.token !== token || !act.inflight) return;
      this.stopWork(act, null);
      if (!ok) this.workBroke(act, work, payload);
      else if (work === "attempt") this.onAttemptResult(act, payload as AttemptResult);
      else if (work === "conditions") this.onConditionsResult(act, payload as ConditionsResult);
      else if (work === "until") this.onUntilResult(act, payload as UntilResult);
      else this.onCombineResult(act, payload as CombineResult);
    });
  }

  /** Arms the limit of `act`'s current work; when it fires, the work is aborted and fails. */
  private arm(act: Activation, token: number, work: Work, ms: number): void {
    act.timer = this.run.options.clock.setTimer(ms, () =>
      this.enter(() => {
        if (act.token !== token || !act.inflight) return;
        act.timer = null;
        this.stopWork(act, "timeout");
        this.workTimedOut(act, work);
      }),
    );
  }

  private workTimedOut(act: Activation, work: Work): void {
    const id = act.n.id;
    const conditionTimeout = () =>
      nodeError(
        "condition_timeout",
        `the outgoing conditions of "${id}" did not finish within ${CONDITION_TIMEOUT_MS / 1000} s; make them faster or move the work into the node`,
      );
    if (work === "attempt" && act.phase === "conditions") {
      this.attemptFailed(act, conditionTimeout(), "conditions");
    } else if (work === "attempt") {
      const message = `attempt ${act.attempt} of "${id}" did not finish within its ${act.n.timeoutMs! / 1000} s timeout; raise timeout= or make the node faster`;
      this.attemptFailed(act, { class: "timeout", message, retryable: true, traceback: null }, "node");
    } else if (work === "conditions") {
      this.conditionsFailed(act, conditionTimeout());
    } else if (work === "until") {
      const message = `the until condition of loop "${id}" did not finish within ${UNTIL_TIMEOUT_MS / 1000} s; make it faster`;
      this.fail(act, nodeError("until_timeout", message), "until");
    } else {
      const message = `combine of "${id}" did not finish within ${COMBINE_TIMEOUT_MS / 1000} s; make it faster`;
      this.fail(act, nodeError("combine_timeout", message), "combine");
    }
  }

  /** The executor threw or rejected instead of returning a result. */
  private workBroke(act: Activation, work: Work, thrown: unknown): void {
    const error: NodeError = {
      class: "internal_error",
      message: `the ${work} executor threw instead of returning a result: ${describe(thrown)}`,
      retryable: false,
      traceback: thrown instanceof Error && thrown.stack !== undefined ? thrown.stack : null,
    };
    if (work === "attempt") this.attemptFailed(act, error, "node");
    else if (work === "conditions") this.conditionsFailed(act, error);
    else this.fail(act, error, work);
  }

  /** Ends what `act` has in flight or armed: its timer, its executor call (aborted when a reason is given),
   * its slot. */
  private stopWork(act: Activation, abortReason: string | null): void {
    if (act.asks > 0) this.asks.attemptEnded(act);
    act.token++;
    if (act.timer !== null) {
      act.timer.cancel();
      act.timer = null;
    }
    if (act.inflight) {
      act.inflight = false;
      this.busy--;
      if (abortReason !== null) act.call?.abort(abortReason);
    }
    act.call = null;
    const pool = act.pool;
    if (pool !== null) {
      act.pool = null;
      pool.active--;
      if (pool.head < pool.queue.length) this.deferred.push(() => this.dispatch(pool));
    }
  }

  // ================================================================ attempts

  private requestAttempt(act: Activation): void {
    if (this.failing) {
      this.unlive(act);
      this.cancelActivation(act, "run_failed");
      return;
    }
    if (!act.approved && this.run.approvals.has(act.n.id)) {
      act.status = "waiting_approval";
      this.emit({ type: "node_waiting_approval", ...ref(act) });
      return;
    }
    if (this.paused) {
      act.status = "queued";
      act.waitingIn = "held";
      this.held.push(act);
      return;
    }
    const pool = act.n.node.kind === "agent" ? this.agents : this.python;
    if (pool.active >= pool.limit) {
      act.status = "queued";
      act.waitingIn = pool;
      pool.queue.push(act);
      this.emit({
        type: "attempt_queued",
        ...ref(act),
        attempt: act.attempt + 1,
        reason: pool === this.agents ? "agent_limit" : "python_limit",
        limit: pool.limit,
      });
      return;
    }
    this.startAttempt(act, pool);
  }

  private dispatch(pool: Pool): void {
    while (!this.paused && !this.ended && pool.active < pool.limit && pool.head < pool.queue.length) {
      const act = pool.queue[pool.head++]!;
      if (pool.head === pool.queue.length) {
        pool.queue.length = 0;
        pool.head = 0;
      }
      if (act.status === "queued" && act.waitingIn === pool) this.startAttempt(act, pool);
    }
  }

  private onResume(): void {
    this.emit({ type: "workflow_run_resumed" });
    const held = this.held;
    this.held = [];
    for (const act of held) {
      if (act.status === "queued" && act.waitingIn === "held") this.requestAttempt(act);
    }
    this.dispatch(this.agents);
    this.dispatch(this.python);
  }

  private startAttempt(act: Activation, pool: Pool): void {
    const n = act.n;
    act.waitingIn = null;
    act.attempt++;
    act.phase = "node";
    act.questions = 0;
    pool.active++;
    act.pool = pool;
    this.write({
      activation_id: act.id,
      attempt: act.attempt,
      iteration: act.iteration,
      loop_id: act.loopId,
      max_attempts: n.maxAttempts,
      node_id: n.id,
      run_id: this.runId,
      seq: this.seq++,
      timeout_ms: n.timeoutMs,
      ts: this.run.options.clock.now(),
      type: "attempt_started",
    });
    this.launch(act, "attempt", "running", n.timeoutMs);
  }

  private onAttemptResult(act: Activation, result: AttemptResult): void {
    if (result?.status === "completed" && typeof result.value?.text === "string") {
      act.valueAttempt = act.attempt;
      act.continueFrom = null;
      this.returned(act, result.value, result.decisions ?? null);
    } else if (result?.status === "failed") {
      this.attemptFailed(act, result.error, result.phase ?? "node");
    } else {
      const message = `the executor returned no valid result for "${act.n.id}" (expected a completed WorkflowValue or a failure)`;
      this.attemptFailed(act, nodeError("internal_error", message), "node");
    }
  }

  /** One attempt failed: retry it automatically if its class, `retryable` and `Retry` allow, else fail. */
  private attemptFailed(act: Activation, error: NodeError, phase: "node" | "conditions"): void {
    const canRetry =
      phase === "node" &&
      error.retryable &&
      !NEVER_RETRIED_CLASSES.has(error.class) &&
      act.attempt - act.roundStart < act.n.maxAttempts &&
      !this.failing;
    const delay = canRetry ? act.n.backoffMs : null;
    this.emit({
      type: "attempt_failed",
      ...ref(act),
      attempt: act.attempt,
      error,
      phase,
      will_retry: canRetry,
      retry_delay_ms: delay,
    });
    // An agent whose own attempt failed continues its conversation; one that had finished starts over.
    act.continueFrom = act.n.node.kind === "agent" && phase === "node" ? act.attempt : null;
    if (!canRetry) {
      this.fail(act, error, "node");
    } else if (delay === null || delay <= 0) {
      this.requestAttempt(act);
    } else {
      act.status = "retry_backoff";
      const token = act.token;
      act.timer = this.run.options.clock.setTimer(delay, () =>
        this.enter(() => {
          if (act.token !== token || act.status !== "retry_backoff") return;
          act.timer = null;
          this.requestAttempt(act);
        }),
      );
    }
  }

  // ================================================================ conditions, until, combine

  private startConditions(act: Activation): void {
    if (this.failing) {
      this.unlive(act);
      this.cancelActivation(act, "run_failed");
      return;
    }
    this.launch(act, "conditions", "deciding", CONDITION_TIMEOUT_MS);
  }

  private onConditionsResult(act: Activation, result: ConditionsResult): void {
    if (result?.status === "decided") this.applyDecisions(act, result.decisions);
    else if (result?.status === "failed") this.conditionsFailed(act, result.error);
    else
      this.conditionsFailed(
        act,
        nodeError("internal_error", "the conditions executor returned no valid result"),
      );
  }

  /** A failed condition fails the source node: a Python or agent node's attempt, or the loop itself. */
  private conditionsFailed(act: Activation, error: NodeError): void {
    const kind = act.n.node.kind;
    if (kind === "python" || kind === "agent") this.attemptFailed(act, error, "conditions");
    else this.fail(act, error, "conditions");
  }

  private applyDecisions(act: Activation, decisions: EdgeDecisions): void {
    const keys = act.n.conditionKeys!;
    const batch = act.n.conditions!;
    const passed = new Set<string>();
    let problem: string | null = null;
    for (const key of decisions?.passed ?? []) {
      if (!keys.has(key))
        problem = `the decisions name edge ${key}, which is not a conditional edge of "${act.n.id}"`;
      passed.add(key);
    }
    if (problem === null && batch.switch !== null) {
      let selected = passed.has(batch.switch.default) ? 1 : 0;
      for (const key of batch.switch.cases) if (passed.has(key)) selected++;
      if (selected !== 1) {
        problem = `the decisions select ${selected} switch branches of "${act.n.id}"; exactly one (a case or the default) must be selected`;
      }
    }
    if (problem !== null) this.conditionsFailed(act, nodeError("internal_error", problem));
    else this.finish(act, passed);
  }

  private startIteration(loopAct: Activation, iteration: number, rerun: boolean): void {
    const loop = loopAct.loop!;
    const n = loopAct.n;
    loopAct.status = "looping";
    loop.iteration = iteration;
    loop.unsettled = n.body.length;
    loop.bodyFailed = 0;
    loop.exitValue = null;
    this.emit({
      type: "loop_iteration",
      ...ref(loopAct),
      loop_iteration: iteration,
      max_iterations: (n.node as LoopNode).max_iterations,
      rerun,
    });
    for (const i of n.body) {
      const previous = this.current[i];
      const act = new Activation(this.nodes[i]!, iteration, loopAct);
      if (rerun && previous !== undefined) {
        // The same activation IDs again: attempt numbers continue so records stay distinct.
        act.attempt = previous.attempt;
        act.roundStart = previous.attempt;
      }
      this.current[i] = act;
    }
    const entry = this.current[n.entry]!;
    entry.pending = 0;
    this.begin(entry, [loop.entryInput]);
  }

  private iterationDone(loopAct: Activation): void {
    if (this.failing || this.ended) return;
    const loop = loopAct.loop!;
    const n = loopAct.n;
    if (loop.bodyFailed > 0) {
      const message = `iteration ${loop.iteration} of loop "${n.id}" ended with ${loop.bodyFailed} failed body node(s)`;
      this.fail(loopAct, nodeError("loop_body_failed", message), "iteration");
      return;
    }
    const exit = this.current[n.exit]!;
    if (exit.status !== "completed" || exit.value === null) {
      const message = `iteration ${loop.iteration} of loop "${n.id}" ended without a value: its exit node "${exit.n.id}" was skipped because no branch passed it a result; make sure some edge always reaches the exit`;
      this.fail(loopAct, nodeError("loop_no_value", message), "iteration");
      return;
    }
    loop.exitValue = exit.value;
    loop.exitActivation = exit.id;
    exit.value = null;
    this.callUntil(loopAct);
  }

  private callUntil(loopAct: Activation): void {
    this.launch(loopAct, "until", "until", UNTIL_TIMEOUT_MS);
  }

  private onUntilResult(act: Activation, result: UntilResult): void {
    if (result?.status !== "decided") {
      const error =
        result?.status === "failed"
          ? result.error
          : nodeError("internal_error", "the until executor returned no valid result");
      this.fail(act, error, "until");
      return;
    }
    const loop = act.loop!;
    const node = act.n.node as LoopNode;
    const value = loop.exitValue!;
    const exhausted = !result.stop && loop.iteration >= node.max_iterations;
    this.emit({
      type: "loop_until",
      ...ref(act),
      loop_iteration: loop.iteration,
      stop: result.stop,
      exhausted,
    });
    if (result.stop || (exhausted && node.on_exhausted === "continue")) {
      loop.exitValue = null;
      act.valueAttempt = null;
      this.returned(act, value, null);
    } else if (!exhausted) {
      loop.entryInput = { node_id: this.nodes[act.n.exit]!.id, activationId: loop.exitActivation, value };
      loop.exitValue = null;
      this.startIteration(act, loop.iteration + 1, false);
    } else {
      const message = `loop "${act.n.id}" reached max_iterations=${node.max_iterations} and until still returned False; raise max_iterations or use on_exhausted="continue"`;
      this.fail(act, nodeError("loop_exhausted", message), "until");
    }
  }

  private callCombine(act: Activation): void {
    const bytes = combineInputBytes(sourceValues(act));
    if (bytes > COMBINE_INPUT_LIMIT_BYTES) {
      const message = `the ${act.inputs!.length} source(s) passed to combine of "${act.n.id}" take ${bytes} bytes as UTF-8 JSON; the limit is 12 MiB (${COMBINE_INPUT_LIMIT_BYTES} bytes). Pass less text or data into the join, or drop combine to use the default merge`;
      this.fail(act, nodeError("value_too_large", message), "combine");
      return;
    }
    this.launch(act, "combine", "combining", COMBINE_TIMEOUT_MS);
  }

  private onCombineResult(act: Activation, result: CombineResult): void {
    if (result?.status === "completed" && typeof result.value?.text === "string") {
      act.valueAttempt = null;
      this.returned(act, result.value, null);
    } else {
      const error =
        result?.status === "failed"
          ? result.error
          : nodeError("internal_error", "the combine executor returned no valid result");
      this.fail(act, error, "combine");
    }
  }

  // ================================================================ failure, retry, skip

  /** `act` failed and will not retry automatically: apply the failure policy. */
  private fail(act: Activation, error: NodeError, phase: FailurePhase): void {
    const kind = act.n.node.kind;
    act.status = "failed";
    act.failPhase = phase;
    this.unlive(act);
    this.emit({
      type: "node_failed",
      ...ref(act),
      kind,
      attempt: kind === "python" || kind === "agent" ? act.attempt : null,
      error,
      phase,
    });
    const outcome = failureOutcome(error.class);
    const ending: Ending = { outcome, reason: "", act, error: error.message, errorClass: error.class };
    switch (failureAction(this.run.policy, outcome)) {
      case "end":
        this.end(ending);
        return;
      case "await_retry":
        act.status = "awaiting_retry";
        this.live(act);
        this.emit({ type: "node_awaiting_retry", ...ref(act), phase, error_class: error.class });
        return;
      case "stop_new_work":
        this.firstFailure ??= ending;
        this.failing = true;
        // Nothing new starts; work in flight finishes, then the run ends (see `drain`).
        for (let a = this.liveHead; a !== null; ) {
          const next = a.next;
          if (!a.inflight && a.status !== "looping") {
            this.unlive(a);
            this.cancelActivation(a, "run_failed");
          }
          a = next;
        }
        return;
      case "cut_off":
        // What depends on the failure can never run; independent branches go on.
        this.firstFailure ??= ending;
        if (act.loopAct !== null) act.loopAct.loop!.bodyFailed++;
        this.propagate(act, null, null, true);
        this.settle(act);
        return;
    }
  }

  private retry(act: Activation): void {
    if (act.status !== "awaiting_retry") return;
    const phase = act.failPhase;
    this.emit({ type: "node_retried", ...ref(act), phase });
    if (phase === "node") {
      act.status = "queued";
      act.roundStart = act.attempt;
      this.requestAttempt(act);
    } else if (phase === "conditions") {
      this.startConditions(act);
    } else if (phase === "until") {
      this.callUntil(act);
    } else if (phase === "iteration") {
      this.startIteration(act, act.loop!.iteration, true);
    } else {
      this.callCombine(act);
    }
  }

  private userSkip(act: Activation, note: string | null, value: WorkflowValue | null): void {
    if (!act.live || act.status === "looping") return;
    this.stopWork(act, "skipped");
    act.waitingIn = null;
    act.note = note;
    if (value === null) {
      this.skip(act, "user_skipped", note);
      return;
    }
    act.substituted = true;
    act.valueAttempt = null;
    this.returned(act, value, null);
  }

  // ================================================================ attempt callbacks (AttemptIO)

  /** Whether `token` still names the attempt in flight on `act`. */
  isCurrent(act: Activation, token: number): boolean {
    return !this.ended && act.token === token && act.inflight;
  }

  onEmit(act: Activation, token: number, text: string): void {
    if (!this.isCurrent(act, token)) return;
    this.emit({ type: "emit", ...ref(act), attempt: act.attempt, text });
    if (this.sinkError !== null) this.enter(() => {});
  }

  onActivity(act: Activation, token: number, activity: AgentActivity): void {
    if (!this.isCurrent(act, token)) return;
    this.emit({ type: "agent_activity", ...ref(act), attempt: act.attempt, activity });
    if (this.sinkError !== null) this.enter(() => {});
  }

  onConditionsStarted(act: Activation, token: number): void {
    this.enter(() => {
      if (!this.isCurrent(act, token) || act.phase === "conditions" || act.n.conditions === null) return;
      act.phase = "conditions";
      act.timer?.cancel();
      act.timer = null;
      this.arm(act, token, "attempt", CONDITION_TIMEOUT_MS);
    });
  }

  onAsk(act: Activation, token: number, request: AskRequest, signal: AbortSignal): Promise<AskResponse> {
    return this.asks.ask(act, token, request, signal);
  }

  // ================================================================ asks (AskHost)

  recordQuestion(act: Activation, ask: PendingAsk, summary: string): void {
    this.emit({
      type: "question",
      ...ref(act),
      attempt: ask.attempt,
      question_id: ask.question_id,
      ask_id: ask.ask_id,
      summary,
      questions: ask.questions,
    });
  }

  recordAnswer(
    act: Activation,
    ask: PendingAsk,
    status: "answered" | "unavailable" | "cancelled" | "failed",
    summary: string,
  ): void {
    this.emit({
      type: "answer",
      ...ref(act),
      attempt: ask.attempt,
      question_id: ask.question_id,
      ask_id: ask.ask_id,
      status,
      summary,
    });
  }

  failAttempt(act: Activation, token: number, error: NodeError): void {
    if (!this.isCurrent(act, token)) return;
    this.stopWork(act, error.class);
    this.attemptFailed(act, error, "node");
  }
}

/** The fields that name an activation in every node event. */
function ref(
  act: Activation,
): Pick<EngineEventOf<"node_started">, "node_id" | "activation_id" | "iteration" | "loop_id"> {
  return { node_id: act.n.id, activation_id: act.id, iteration: act.iteration, loop_id: act.loopId };
}

function nodeError(cls: string, message: string): NodeError {
  return { class: cls, message, retryable: false, traceback: null };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function storageFailed(result: RunResult, error: unknown): RunResult {
  return {
    ...result,
    outcome: "storage_failed",
    reason: "",
    node_id: "",
    activation_id: null,
    error_class: null,
    error: `run records could not be written: ${describe(error)}`,
  };
}

function refuse(code: ControlErrorCode, message: string): ControlResult {
  return { ok: false, code, message };
}
