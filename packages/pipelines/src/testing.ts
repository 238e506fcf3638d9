/**
 * @module @icode/pipelines/testing
 * A scripted `NodeExecutor` for tests of anything that drives pipeline runs: per node, what each attempt
 * ends with, how long it takes, a gate the test opens, and a count of every call. It runs no agent but it
 * is a real executor: it reports `running`, honours the abort signal and resolves with a `NodeOutcome`.
 *
 * @example
 * const executor = new ScriptedExecutor({ review: { outcomes: [{ status: "failed", transient: true }, { status: "succeeded" }] } });
 * await drivePipelineRun({ store, runId, executor, owner: "test", runDir, launchCwd });
 * executor.callsOf("review").length; // → 2
 */
import type { Handoff } from "./handoff";
import type { NodeExecutor, NodeOutcome, NodeRunEvent, NodeRunRequest } from "./run/executor";

/** What one attempt of a scripted node ends with. */
export type ScriptedOutcome =
  | { status: "succeeded"; handoff?: Handoff }
  | { status: "blocked"; reason?: string; handoff?: Handoff | null }
  | { status: "failed"; code?: string; message?: string; transient?: boolean }
  /** Ends `canceled` without being aborted (an executor breaking its contract). */
  | { status: "canceled" };

export interface ScriptedNode {
  /** By attempt number (the first for attempt 1, …); the last one repeats. Default: succeeded with `{ summary: "<id> done" }`. */
  outcomes?: readonly ScriptedOutcome[];
  /** How long an attempt takes after reporting `running` (default: the executor's `delayMs`, else 0). */
  delayMs?: number;
  /** Attempts wait until `release(nodeId)` (after their delay). */
  gated?: boolean;
  /** Reported after `running`, before the delay (for example a `correction` round). */
  events?: readonly NodeRunEvent[];
}

interface Waiter {
  count: number;
  resolve: () => void;
}

export class ScriptedExecutor implements NodeExecutor {
  /** Every request, in the order attempts started. */
  readonly calls: NodeRunRequest[] = [];
  /** Run IDs `stopSessions` was called with. */
  readonly stoppedSessions: string[] = [];
  /** Attempts running now, and the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  closed = false;
  private readonly open = new Set<string>();
  private readonly gates = new Map<string, Array<() => void>>();
  private readonly waiters = new Map<string, Waiter[]>();

  constructor(
    private readonly script: Readonly<Record<string, ScriptedNode>> = {},
    private readonly options: { delayMs?: number } = {},
  ) {}

  callsOf(nodeId: string): NodeRunRequest[] {
    return this.calls.filter((c) => c.node.id === nodeId);
  }

  /** Opens a gated node: waiting attempts go on, later ones do not wait. */
  release(nodeId: string): void {
    this.open.add(nodeId);
    for (const go of this.gates.get(nodeId) ?? []) go();
    this.gates.delete(nodeId);
  }

  /** Resolves once `nodeId` has been called `count` times in all. */
  started(nodeId: string, count = 1): Promise<void> {
    if (this.callsOf(nodeId).length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.waiters.get(nodeId) ?? [];
      list.push({ count, resolve });
      this.waiters.set(nodeId, list);
    });
  }

  async runNode(request: NodeRunRequest, signal: AbortSignal): Promise<NodeOutcome> {
    if (this.closed) throw new Error("the scripted executor was closed");
    const id = request.node.id;
    this.calls.push(request);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const calls = this.callsOf(id).length;
    const ready = this.waiters.get(id)?.filter((w) => w.count <= calls) ?? [];
    this.waiters.set(id, this.waiters.get(id)?.filter((w) => w.count > calls) ?? []);
    for (const w of ready) w.resolve();
    const entry = this.script[id] ?? {};
    const session = request.reuseSession ?? `session-${id}-${request.attempt}`;
    const record = { session_ref: session, corrections: 0, transcript: null, usage: null };
    try {
      request.onEvent({ type: "running", session_ref: session });
      let corrections = 0;
      for (const event of entry.events ?? []) {
        if (event.type === "correction") corrections = event.round;
        request.onEvent(event);
      }
      record.corrections = corrections;
      if (!(await this.wait(entry.delayMs ?? this.options.delayMs ?? 0, signal))) {
        return { ...record, status: "canceled" };
      }
      if (entry.gated === true && !this.open.has(id) && !(await this.gate(id, signal))) {
        return { ...record, status: "canceled" };
      }
      const outcomes = entry.outcomes ?? [];
      const scripted = outcomes[Math.min(request.attempt, outcomes.length) - 1] ?? { status: "succeeded" };
      switch (scripted.status) {
        case "succeeded":
          return { ...record, status: "succeeded", handoff: scripted.handoff ?? { summary: `${id} done` } };
        case "blocked":
          return {
            ...record,
            status: "blocked",
            reason: scripted.reason ?? `${id} blocked itself`,
            handoff: scripted.handoff ?? null,
          };
        case "failed":
          return {
            ...record,
            status: "failed",
            error: {
              code: scripted.code ?? "scripted_failure",
              message: scripted.message ?? `${id} failed (attempt ${request.attempt})`,
              ...(scripted.transient === undefined ? {} : { transient: scripted.transient }),
            },
          };
        case "canceled":
          return { ...record, status: "canceled" };
      }
    } finally {
      this.inFlight--;
    }
  }

  async stopSessions(runId: string): Promise<void> {
    this.stoppedSessions.push(runId);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** False when aborted first. */
  private wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private gate(id: string, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal.addEventListener("abort", onAbort, { once: true });
      const list = this.gates.get(id) ?? [];
      list.push(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      });
      this.gates.set(id, list);
    });
  }
}
