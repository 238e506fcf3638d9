import type { Timer } from "./clock";
import type { FailurePhase } from "./codes";
import type { IndexedNode } from "./graph-index";
import type { ActivationState } from "./result";
import type { WorkflowValue } from "./value";

/** Where an activation is. The `ActivationState`s are the ones `inspect()` shows (begun, not settled). */
export type Status = "pending" | ActivationState | "completed" | "skipped" | "failed" | "cancelled";

/** A value that arrived over one incoming edge (or the run input, `activationId: null`). */
export interface Received {
  /** The source node's ID: the heading of the default merge. */
  readonly node_id: string;
  readonly activationId: string | null;
  readonly value: WorkflowValue;
}

/** A bounded group of attempts (agents: 4 per run). */
export interface Pool {
  readonly limit: number;
  active: number;
  readonly queue: Activation[];
  head: number;
}

/** Progress of a loop activation. */
export interface LoopState {
  iteration: number;
  /** Body activations of this iteration that have not settled. */
  unsettled: number;
  bodyFailed: number;
  /** What the entry receives this iteration (kept to rerun it). */
  entryInput: Received;
  exitValue: WorkflowValue | null;
  exitActivation: string;
}

/** Called once with the abort reason when an executor call is aborted (see `CallIO.onAbort`). */
export type AbortListener = (reason: string) => void;

/**
 * The abort handle of one executor call. Nothing is allocated for an abort that never comes: the
 * `AbortController` is created only when someone reads `signal` (one costs more than the rest of a node's
 * scheduling), and listeners given to `onAbort` are plain functions; an abort before the first read yields an
 * already-aborted signal, and a listener added after the abort is called at once.
 */
export class Call {
  private ctrl: AbortController | null = null;
  private reason: string | null = null;
  /** One listener (the usual case) or several. */
  private listeners: AbortListener | AbortListener[] | null = null;

  get signal(): AbortSignal {
    if (this.ctrl === null) {
      this.ctrl = new AbortController();
      if (this.reason !== null) this.ctrl.abort(this.reason);
    }
    return this.ctrl.signal;
  }

  onAbort(listener: AbortListener): void {
    if (this.reason !== null) {
      callListener(listener, this.reason);
      return;
    }
    const listeners = this.listeners;
    if (listeners === null) this.listeners = listener;
    else if (Array.isArray(listeners)) listeners.push(listener);
    else this.listeners = [listeners, listener];
  }

  abort(reason: string): void {
    if (this.reason !== null) return;
    this.reason = reason;
    this.ctrl?.abort(reason);
    const listeners = this.listeners;
    if (listeners === null) return;
    this.listeners = null;
    if (Array.isArray(listeners)) for (const listener of listeners) callListener(listener, reason);
    else callListener(listeners, reason);
  }
}

/** A listener's failure is the executor's bug; it must not break the scheduler step that aborted the call. */
function callListener(listener: AbortListener, reason: string): void {
  try {
    listener(reason);
  } catch {
    // Ignored, as documented on `CallIO.onAbort`.
  }
}

/**
 * One activation `<node_id>@iter#<n>`: its inputs as they arrive, its state, attempts and the work in
 * flight. Top-level activations are created on their first decided edge, body activations at iteration
 * start. Begun, unsettled activations form an intrusive list (`prev`/`next`) in the order they began.
 */
export class Activation {
  readonly n: IndexedNode;
  readonly id: string;
  readonly iteration: number;
  /** The loop activation whose body holds this one, or `null` at the top level. */
  readonly loopAct: Activation | null;
  /** Incoming edges not yet decided. */
  pending: number;
  /** Values received, by incoming-edge position (allocated on the first value). */
  inputs: (Received | undefined)[] | null = null;
  received = 0;
  /** Incoming edges from failed nodes (policy `continue`). */
  poisoned = 0;
  status: Status = "pending";
  input: WorkflowValue | null = null;
  /** Attempts made over the activation's life. */
  attempt = 0;
  /** `attempt` when the current round of automatic retries began (a manual retry starts a new round). */
  roundStart = 0;
  /** Bumped whenever work ends, so that late settlements and timers of old work are ignored. */
  token = 0;
  inflight = false;
  /** Of a running attempt: still in the function, or evaluating batched conditions. */
  phase: "node" | "conditions" = "node";
  call: Call | null = null;
  timer: Timer | null = null;
  pool: Pool | null = null;
  waitingIn: Pool | "held" | null = null;
  value: WorkflowValue | null = null;
  valueAttempt: number | null = null;
  continueFrom: number | null = null;
  failPhase: FailurePhase = "node";
  approved = false;
  /** Skipped by a person with a value passed on in its place. */
  substituted = false;
  note: string | null = null;
  /** Asks made by the current attempt (numbers them), and how many of them wait for an answer. */
  questions = 0;
  asks = 0;
  loop: LoopState | null = null;
  live = false;
  prev: Activation | null = null;
  next: Activation | null = null;

  constructor(n: IndexedNode, iteration: number, loopAct: Activation | null) {
    this.n = n;
    this.iteration = iteration;
    this.loopAct = loopAct;
    this.id = `${n.id}@iter#${iteration}`;
    this.pending = n.incoming.length;
  }

  get loopId(): string | null {
    return this.loopAct === null ? null : this.loopAct.n.id;
  }
}
