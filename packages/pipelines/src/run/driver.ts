import { isWorkflowError } from "@icode/workflow-errors";
import { PipelineError } from "../codes";
import type { PipelineNode } from "../definition";
import type { Handoff } from "../handoff";
import { type PipelineLimits, pipelineLimits } from "../limits";
import { handoffSchemaOf } from "../output-schema";
import type {
  CommandResult,
  Lease,
  NodePatch,
  NodeState,
  PipelineRun,
  RunNode,
  RunState,
} from "../store/records";
import { TERMINAL_RUN_STATES } from "../store/records";
import type { PipelineStore, RunUpdate } from "../store/store";
import { renderPrompt } from "../template";
import {
  ancestorsOf,
  answerOf,
  answersIn,
  applyCommand,
  interruptedAttempt,
  mergeSnapshot,
  planControl,
  type RunSnapshot,
} from "./control";
import type {
  AttemptEnd,
  AttemptStart,
  PipelineEvent,
  StoredPipelineEvent,
  SupervisorDecision,
} from "./events";
import type { LaunchPermissionMode, NodeExecutor, NodeOutcome, NodeRunEvent } from "./executor";
import { RunRecords } from "./run-records";
import { DEFAULT_SUPERVISION_BUDGET, defaultSupervisor, type Supervisor } from "./supervisor";
import { FAILED_NODE_STATES, FINISHED_NODE_STATES, isNotStarted, policyCancels } from "./transitions";

export interface DriveOptions {
  store: PipelineStore;
  runId: string;
  executor: NodeExecutor;
  /** This driver's lease owner ID: unique per process (and per driver within it). */
  owner: string;
  /** The run's folder: attempts' records (`nodes/<id>/attempt-<n>/`) and `events.jsonl` go here. */
  runDir: string;
  /** Where the run was started: a node's relative `cwd` resolves against it. */
  launchCwd: string;
  /** The worker gear a node's `permission_mode: null` inherits (default `bounded`). */
  launchPermissionMode?: LaunchPermissionMode;
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * `maxParallel`: at most this many attempts in flight. Default: `pipelineLimits(env).limits`, so
   * `ICODE_PIPELINE_MAX_PARALLEL` in `env` applies (10 when unset or invalid).
   */
  limits?: Pick<PipelineLimits, "maxParallel">;
  /** The lease's time to live (default 30 s); renewed every third of it. */
  leaseTtlMs?: number;
  /** How often the command queue is read while nothing else happens (default 50 ms). */
  pollIntervalMs?: number;
  /** Consulted when a node fails or blocks, if the definition's `auto_supervise` is on (default: `defaultSupervisor`). */
  supervisor?: Supervisor;
  /** Supervisor decisions per run (default 3), counted across drivers through the run's events. */
  supervisionBudget?: number;
  /**
   * Return (`stop: "waiting_approval"`, lease released) once nothing runs and nothing can launch because
   * the run waits at approval gates, instead of waiting for the approval (default false). The run stays
   * `running`; an `approve_node` through `controlPipelineRun` then says `needsDriver`.
   */
  stopAtGates?: boolean;
  /** Aborting it stops the driver: running attempts are interrupted, the lease released, the run left to the next driver. */
  signal?: AbortSignal;
  /** Every event of the run as it is stored, in `seq` order (from the first this driver sees). */
  onEvent?: (event: StoredPipelineEvent) => void;
}

/**
 * Why `drivePipelineRun` returned: `converged` (the run is `succeeded`, `failed` or `canceled`), `paused`,
 * `waiting_approval` (with `stopAtGates`: only approval gates are left to pass), `stopped` (its signal), `lease_lost` (another driver took the run over; nothing more was written),
 * `lease_held` (another live driver holds the run; nothing was done).
 */
export type DriveStop = "converged" | "paused" | "waiting_approval" | "stopped" | "lease_lost" | "lease_held";

export interface DriveResult {
  stop: DriveStop;
  run: PipelineRun;
  nodes: RunNode[];
  /** The other driver's lease, for `lease_held`. */
  heldBy: Lease | null;
}

interface InFlight {
  attempt: number;
  controller: AbortController;
  /** Aborted by a cancel action (else by the driver stopping or losing the lease). */
  canceled: boolean;
  done: Promise<void>;
}

class LeaseLost extends Error {}

/**
 * Drives one run from the store until it converges, pauses, or the driver is stopped: takes the run's
 * lease, continues from whatever the store says (a crashed driver's `launching`/`running` nodes get a new
 * attempt; finished nodes never run again), launches at most `maxParallel` attempts at once, applies
 * control actions from the command queue between steps and while nodes run, applies the failure policy
 * and supervision, and writes every change with its events in one store transaction. See docs/pipelines.md,
 * "Running a pipeline".
 *
 * @example
 * const result = await drivePipelineRun({ store, runId, executor, owner: `cli-${process.pid}`, runDir, launchCwd });
 * // → { stop: "converged", run: { state: "succeeded", … }, nodes: [...], heldBy: null }
 */
export async function drivePipelineRun(options: DriveOptions): Promise<DriveResult> {
  return new RunDriver(options).drive();
}

class RunDriver {
  private readonly store: PipelineStore;
  private readonly runId: string;
  private readonly owner: string;
  private readonly ttl: number;
  private readonly poll: number;
  private readonly maxParallel: number;
  private readonly records: RunRecords;
  private readonly supervisor: Supervisor;
  private snapshot!: RunSnapshot;
  private ancestors = new Map<string, Set<string>>();
  /** Where each node is in `snapshot.nodes` (definition order, fixed for the run). */
  private position = new Map<string, number>();
  private readonly inFlight = new Map<string, InFlight>();
  private readonly completions: Array<{ nodeId: string; attempt: number; outcome: NodeOutcome }> = [];
  private readonly nodeEvents: Array<{ nodeId: string; attempt: number; event: NodeRunEvent }> = [];
  private lost = false;
  private stopping = false;
  private lastSeq = 0;
  private budgetLeft = 0;
  private supervisionOn = false;
  private readonly decisions = new Map<string, SupervisorDecision[]>();
  private wakeUp: (() => void) | null = null;
  /**
   * Under `pause`: the failed or blocked nodes the run has already paused for (a pause came after their
   * failure). Only a failure not in it pauses the run again, so that a retry or skip of one failure runs
   * while another still stands, instead of pausing at once.
   */
  private readonly pausedFor = new Set<string>();
  /** Every command answer in the run's events (from the first read, then every mirrored event). */
  private answered = new Map<number, CommandResult>();

  constructor(private readonly options: DriveOptions) {
    this.store = options.store;
    this.runId = options.runId;
    this.owner = options.owner;
    this.ttl = options.leaseTtlMs ?? 30_000;
    this.poll = options.pollIntervalMs ?? 50;
    this.maxParallel = (options.limits ?? pipelineLimits(options.env ?? {}).limits).maxParallel;
    this.records = new RunRecords(options.runDir);
    this.supervisor = options.supervisor ?? defaultSupervisor;
  }

  async drive(): Promise<DriveResult> {
    const { store, runId, owner } = this;
    const lease = await store.acquireLease(runId, owner, this.ttl);
    if (!lease.ok) {
      return { stop: "lease_held", ...(await this.read()), heldBy: lease.held_by };
    }
    const renew = setInterval(
      () => {
        store.renewLease(runId, owner, this.ttl).catch((error: unknown) => {
          if (isWorkflowError(error) && error.code === "pipeline_lease_not_held") this.loseLease();
        });
      },
      Math.max(1, Math.floor(this.ttl / 3)),
    );
    const onAbort = () => this.wake();
    this.options.signal?.addEventListener("abort", onAbort);
    let outcome: { ok: true; result: DriveResult } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await this.run(lease.lease, lease.took_over) };
    } catch (error) {
      this.abortAll();
      await this.settle();
      outcome =
        error instanceof LeaseLost
          ? { ok: true, result: { stop: "lease_lost", ...(await this.read()), heldBy: null } }
          : { ok: false, error };
    } finally {
      clearInterval(renew);
      this.options.signal?.removeEventListener("abort", onAbort);
    }
    // No record write outlives the driver, and a failed one reaches the caller whatever the driver's end.
    const recordFailure = await this.records.flush().then(
      () => null,
      (error: unknown) => error,
    );
    if (!outcome.ok) {
      // Leave the run to the next driver at once rather than when the lease expires (best effort: the store
      // itself may be what failed).
      await this.store.releaseLease(this.runId, this.owner).catch(() => {});
      if (recordFailure === null || recordFailure === outcome.error) throw outcome.error;
      throw withContext(
        recordFailure,
        `; the driver had failed before: ${describeError(outcome.error)}`,
        outcome.error,
      );
    }
    if (recordFailure !== null) {
      const { stop, run } = outcome.result;
      throw withContext(recordFailure, `; the driver ended ${stop} with the run ${run.state} in the store`);
    }
    return outcome.result;
  }

  private async read(): Promise<{ run: PipelineRun; nodes: RunNode[] }> {
    return { run: await this.store.getRun(this.runId), nodes: await this.store.getRunNodes(this.runId) };
  }

  private async run(lease: Lease, tookOver: boolean): Promise<DriveResult> {
    await this.records.sync(this.store, this.runId);
    const events = await this.store.listEvents(this.runId);
    this.lastSeq = events.at(-1)?.seq ?? 0;
    this.answered = answersIn(events);
    const used = events.filter((e) => e.event.type === "supervisor_decision");
    this.budgetLeft = Math.max(
      0,
      (this.options.supervisionBudget ?? DEFAULT_SUPERVISION_BUDGET) - used.length,
    );
    for (const e of used) {
      if (e.event.type !== "supervisor_decision") continue;
      const list = this.decisions.get(e.event.node_id) ?? [];
      list.push(e.event.decision);
      this.decisions.set(e.event.node_id, list);
    }
    const lastSupervision = events.filter((e) => e.event.type === "supervision").at(-1)?.event;
    this.supervisionOn = lastSupervision?.type === "supervision" && lastSupervision.on;

    this.snapshot = await this.read();
    // A failure the run paused after (by the policy or a person) was seen; one recorded after the last pause
    // (say by a driver that died before it paused) still pauses the run.
    const lastPause =
      events.findLast((e) => e.event.type === "run_state" && e.event.to === "paused")?.seq ?? 0;
    for (const node of this.snapshot.nodes) {
      if (!FAILED_NODE_STATES.includes(node.state)) continue;
      const failedAt = events.findLast(
        (e) => e.event.type === "node_state" && e.event.node_id === node.node_id && e.event.to === node.state,
      )?.seq;
      if (failedAt !== undefined && failedAt < lastPause) this.pausedFor.add(node.node_id);
    }
    this.ancestors = ancestorsOf(this.snapshot.run.definition);
    this.position = new Map(this.snapshot.nodes.map((n, i) => [n.node_id, i]));

    // Continue from the store: this driver runs nothing yet, so a node launching or running belongs to a
    // driver that died (or this owner's previous process): its attempt ended, a new one follows.
    const start: PipelineEvent[] = [
      { type: "driver_started", owner: this.owner, generation: lease.generation, took_over: tookOver },
    ];
    const nodes: Record<string, NodePatch> = {};
    const endAttempts: AttemptEnd[] = [];
    const open = new Set(
      (await this.store.listAttempts(this.runId))
        .filter((a) => a.status === "running")
        .map((a) => `${a.node_id}/${a.attempt}`),
    );
    for (const node of this.snapshot.nodes) {
      if (node.state !== "launching" && node.state !== "running") continue;
      nodes[node.node_id] = { state: "ready" };
      start.push({
        type: "node_state",
        node_id: node.node_id,
        from: node.state,
        to: "ready",
        reason: "driver lost",
      });
      if (open.has(`${node.node_id}/${node.attempts}`)) {
        endAttempts.push(interruptedAttempt(node.node_id, node.attempts));
        start.push({
          type: "attempt_ended",
          node_id: node.node_id,
          attempt: node.attempts,
          status: "interrupted",
          error: interruptedAttempt(node.node_id, node.attempts).error,
        });
      }
    }
    await this.write({ nodes, endAttempts, events: start });

    for (;;) {
      if (this.lost) throw await this.giveUp();
      if (this.options.signal?.aborted && !this.stopping) {
        this.stopping = true;
        this.abortAll();
      }
      await this.drainNodeEvents();
      await this.drainCompletions();
      if (!this.stopping) {
        await this.takeCommands();
        await this.step();
      }
      if (this.inFlight.size === 0) {
        const state = this.snapshot.run.state;
        const reason = this.stopping
          ? "stopped"
          : TERMINAL_RUN_STATES.includes(state)
            ? "converged"
            : state === "paused"
              ? "paused"
              : this.options.stopAtGates === true &&
                  state === "running" &&
                  this.snapshot.nodes.some((n) => n.state === "waiting_approval")
                ? "waiting_approval"
                : null;
        if (reason !== null) {
          const events: PipelineEvent[] = [];
          // Supervision this run turned on ends once the run has converged.
          if (reason === "converged" && this.supervisionOn) events.push({ type: "supervision", on: false });
          events.push({ type: "driver_stopped", owner: this.owner, reason });
          await this.write({ events });
          // The run is in the store whatever the disk did: release it, then report a failed record write.
          const flushed = this.records.flush().then(
            () => null,
            (error: unknown) => error,
          );
          await this.store.releaseLease(this.runId, this.owner);
          // A failed record write is reported by `drive` (with how the run ended), as on every other path.
          await flushed;
          return { stop: reason, run: this.snapshot.run, nodes: [...this.snapshot.nodes], heldBy: null };
        }
      }
      await this.idle();
    }
  }

  // ---- writing -----------------------------------------------------------------------------------------

  /** One atomic store write; then the events are mirrored to disk and to `onEvent`. */
  private async write(update: RunUpdate): Promise<void> {
    if (this.lost) throw new LeaseLost();
    try {
      const updated = await this.store.updateRun(this.runId, this.owner, update);
      this.snapshot = mergeSnapshot(this.snapshot, updated);
    } catch (error) {
      if (isWorkflowError(error) && error.code === "pipeline_lease_not_held") {
        this.loseLease();
        throw new LeaseLost();
      }
      throw error;
    }
    await this.mirror();
  }

  /** Everything stored since the last mirrored event (also what `applyCommand` wrote). */
  private async mirror(): Promise<void> {
    const fresh = await this.store.listEvents(this.runId, { fromSeq: this.lastSeq + 1 });
    if (fresh.length === 0) return;
    this.lastSeq = fresh.at(-1)!.seq;
    this.records.appendEvents(fresh);
    for (const stored of fresh) {
      const answer = answerOf(stored.event);
      if (answer !== null) this.answered.set(answer.commandId, answer.result);
    }
    for (const event of fresh) this.options.onEvent?.(event);
  }

  private loseLease(): void {
    this.lost = true;
    this.abortAll();
    this.wake();
  }

  /** After losing the lease: wait for the attempts to end, write nothing. */
  private async giveUp(): Promise<LeaseLost> {
    this.abortAll();
    await this.settle();
    return new LeaseLost();
  }

  private abortAll(): void {
    for (const flight of this.inFlight.values()) flight.controller.abort();
  }

  private async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
  }

  /**
   * Ends the idle wait at the next turn of the event loop (`setImmediate`), so that attempts ending together
   * (their replies or timers in one batch) are recorded in one write rather than one write each.
   */
  private wake(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    if (wake !== null) setImmediate(wake);
  }

  private idle(): Promise<void> {
    if (this.completions.length > 0 || this.nodeEvents.length > 0 || this.lost) return Promise.resolve();
    if (this.options.signal?.aborted && !this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, this.poll);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private node(nodeId: string): RunNode {
    return this.snapshot.nodes[this.position.get(nodeId)!]!;
  }

  // ---- commands ----------------------------------------------------------------------------------------

  private async takeCommands(): Promise<void> {
    let taken: Awaited<ReturnType<PipelineStore["takeCommands"]>>;
    try {
      taken = await this.store.takeCommands(this.runId, this.owner);
    } catch (error) {
      if (isWorkflowError(error) && error.code === "pipeline_lease_not_held") {
        this.loseLease();
        throw new LeaseLost();
      }
      throw error;
    }
    for (const stored of taken) {
      try {
        const applied = await applyCommand(
          {
            store: this.store,
            owner: this.owner,
            live: true,
            stopSessions: (runId) => this.options.executor.stopSessions(runId),
            answered: this.answered,
          },
          stored,
          this.snapshot,
        );
        this.snapshot = applied.snapshot;
        for (const nodeId of applied.plan?.abort ?? []) {
          const flight = this.inFlight.get(nodeId);
          if (flight !== undefined) {
            flight.canceled = true;
            flight.controller.abort();
          }
        }
      } catch (error) {
        if (isWorkflowError(error) && error.code === "pipeline_lease_not_held") {
          this.loseLease();
          throw new LeaseLost();
        }
        throw error;
      }
      await this.mirror();
    }
  }

  // ---- one step: readiness, failure policy, launches, convergence ---------------------------------------

  private async step(): Promise<void> {
    const { run } = this.snapshot;
    if (run.state !== "pending" && run.state !== "running") return;
    const events: PipelineEvent[] = [];
    const nodes: Record<string, NodePatch> = {};
    let runState: RunState = run.state;
    const setRun = (to: RunState, reason: string) => {
      if (to === runState) return;
      events.push({ type: "run_state", from: runState, to, reason });
      runState = to;
    };
    if (runState === "pending") setRun("running", "driver started");
    const autoSupervise = run.definition.auto_supervise;
    if (autoSupervise && !this.supervisionOn) {
      events.push({ type: "supervision", on: true });
      this.supervisionOn = true;
    }

    const states = new Map<string, NodeState>(this.snapshot.nodes.map((n) => [n.node_id, n.state]));
    const setNode = (nodeId: string, to: NodeState, reason: string, patch: NodePatch = {}) => {
      events.push({ type: "node_state", node_id: nodeId, from: states.get(nodeId)!, to, reason });
      states.set(nodeId, to);
      nodes[nodeId] = { ...nodes[nodeId], ...patch, state: to };
    };
    const policy = run.failure_policy;

    // The failure policy's cancellations: fail_fast cancels every node not started, continue the ones below a failure.
    for (const node of this.snapshot.nodes) {
      const state = states.get(node.node_id)!;
      if (isNotStarted(state) && policyCancels(policy, node.node_id, states, this.ancestors)) {
        setNode(node.node_id, "canceled", `failure policy ${policy}`);
      }
    }
    // Readiness and gates. Readiness needs succeeded dependencies, which no step changes, so one pass is enough.
    for (const def of run.definition.nodes) {
      if (states.get(def.id) === "pending" && def.depends_on.every((d) => states.get(d) === "succeeded")) {
        setNode(def.id, "ready", "dependencies succeeded");
      }
      if (states.get(def.id) === "ready" && def.requires_approval && !this.node(def.id).approval_granted) {
        setNode(def.id, "waiting_approval", "requires approval");
      }
    }
    // pause: a new failure pauses the run; one it already paused for does not stop a retry elsewhere.
    const standing = this.snapshot.nodes.filter((n) => FAILED_NODE_STATES.includes(states.get(n.node_id)!));
    for (const id of this.pausedFor) {
      if (!standing.some((n) => n.node_id === id)) this.pausedFor.delete(id);
    }
    if (policy === "pause") {
      const fresh = standing.filter((n) => !this.pausedFor.has(n.node_id));
      if (fresh.length > 0) {
        setRun("paused", `failure policy pause: ${nodeList(fresh.map((n) => n.node_id))} failed or blocked`);
        for (const n of standing) this.pausedFor.add(n.node_id);
      }
    }

    // Launches.
    const launches: Array<{ def: PipelineNode; attempt: number; prompt: string }> = [];
    const startAttempts: AttemptStart[] = [];
    if (runState === "running") {
      for (const def of run.definition.nodes) {
        if (this.inFlight.size + launches.length >= this.maxParallel) break;
        if (states.get(def.id) !== "ready") continue;
        const current = this.node(def.id);
        // Never without an approval for this launch, whatever happened before.
        if (def.requires_approval && !current.approval_granted) continue;
        const attempt = current.attempts + 1;
        const prompt = this.prompt(def);
        // reuse_session_of continues the target's session; when it left none (skipped before it ran, or
        // its agent kept no session) the attempt starts a new one, and the launch's event says so.
        const noSession =
          def.reuse_session_of !== null && this.node(def.reuse_session_of).session_ref === null;
        const why = noSession
          ? `launch in a new session: "${def.reuse_session_of}" (reuse_session_of) left no session to continue (skipped before it ran, or its agent kept none)`
          : "launch";
        setNode(def.id, "launching", why, { attempts: attempt, error: null });
        events.push({ type: "attempt_started", node_id: def.id, attempt });
        startAttempts.push({ node_id: def.id, attempt, prompt });
        launches.push({ def, attempt, prompt });
      }
    }
    // Convergence: every node finished and nothing in flight. Under pause a standing failure is never a
    // convergence: once nothing else can advance the run waits for a retry, a skip or a cancel.
    if (runState === "running" && this.inFlight.size === 0 && launches.length === 0) {
      const all = [...states.values()];
      const waiting = all.some((s) => s === "waiting_approval");
      const failedNow = standing.map((n) => n.node_id);
      if (policy === "pause" && failedNow.length > 0 && !waiting) {
        setRun(
          "paused",
          `failure policy pause: nothing else can advance while ${nodeList(failedNow)} ${failedNow.length === 1 ? `is ${states.get(failedNow[0]!)}` : "are failed or blocked"}`,
        );
        for (const id of failedNow) this.pausedFor.add(id);
      } else if (all.every((s) => FINISHED_NODE_STATES.includes(s))) {
        setRun(all.every((s) => s === "succeeded") ? "succeeded" : "failed", "converged");
      }
    }
    if (events.length === 0) return;
    await this.write({
      ...(runState === run.state ? {} : { run: { state: runState } }),
      nodes,
      startAttempts,
      events,
    });
    for (const launch of launches) await this.launch(launch.def, launch.attempt, launch.prompt);
  }

  private prompt(def: PipelineNode): string {
    const upstream: Record<string, Handoff> = {};
    for (const dep of def.depends_on) {
      const handoff = this.node(dep).handoff;
      if (handoff !== null) upstream[dep] = handoff;
    }
    return renderPrompt(def.prompt_template, { task: this.snapshot.run.task_input, node: def, upstream });
  }

  /**
   * Whether a node that has not succeeded continues the session `def` runs in: the session is `def`'s own, or
   * the one it continues (the chain of `reuse_session_of`), and another node names one of those.
   */
  private sessionContinued(def: PipelineNode): boolean {
    const byId = new Map(this.snapshot.run.definition.nodes.map((n) => [n.id, n]));
    const chain = new Set<string>();
    for (let at: PipelineNode | undefined = def; at !== undefined && !chain.has(at.id); ) {
      chain.add(at.id);
      at = at.reuse_session_of === null ? undefined : byId.get(at.reuse_session_of);
    }
    return this.snapshot.run.definition.nodes.some(
      (other) =>
        other.id !== def.id &&
        other.reuse_session_of !== null &&
        chain.has(other.reuse_session_of) &&
        this.node(other.id).state !== "succeeded",
    );
  }

  private async launch(def: PipelineNode, attempt: number, prompt: string): Promise<void> {
    this.records.writePrompt(def.id, attempt, prompt);
    const controller = new AbortController();
    const reuseSession = def.reuse_session_of === null ? null : this.node(def.reuse_session_of).session_ref;
    const finish = (outcome: NodeOutcome) => {
      this.completions.push({ nodeId: def.id, attempt, outcome });
      this.wake();
    };
    let done: Promise<void>;
    try {
      done = this.options.executor
        .runNode(
          {
            runId: this.runId,
            node: def,
            attempt,
            prompt,
            outputSchema: handoffSchemaOf(def),
            reuseSession,
            keepSession: this.sessionContinued(def),
            runDir: this.options.runDir,
            launchCwd: this.options.launchCwd,
            launchPermissionMode: this.options.launchPermissionMode ?? "bounded",
            env: this.options.env ?? {},
            onEvent: (event) => {
              this.nodeEvents.push({ nodeId: def.id, attempt, event });
              this.wake();
            },
          },
          controller.signal,
        )
        .then(finish, (error: unknown) => finish(executorFailure(error)));
    } catch (error) {
      done = Promise.resolve(finish(executorFailure(error)));
    }
    this.inFlight.set(def.id, { attempt, controller, canceled: false, done });
  }

  // ---- what the attempts report ------------------------------------------------------------------------

  private async drainNodeEvents(): Promise<void> {
    if (this.nodeEvents.length === 0 || this.lost) return;
    const batch = this.nodeEvents.splice(0);
    const events: PipelineEvent[] = [];
    const nodes: Record<string, NodePatch> = {};
    for (const { nodeId, attempt, event } of batch) {
      if (this.inFlight.get(nodeId)?.attempt !== attempt) continue;
      events.push({ type: "node_event", node_id: nodeId, attempt, event });
      const state = nodes[nodeId]?.state ?? this.node(nodeId).state;
      if (event.type === "running" && state === "launching") {
        events.push({
          type: "node_state",
          node_id: nodeId,
          from: "launching",
          to: "running",
          reason: "worker started",
        });
        nodes[nodeId] = { state: "running", session_ref: event.session_ref };
      }
    }
    if (events.length > 0) await this.write({ nodes, events });
  }

  /** Records every attempt that ended since the last step in one write, then lets the supervisor see the failures. */
  private async drainCompletions(): Promise<void> {
    if (this.completions.length === 0 || this.lost) return;
    const batch = this.completions.splice(0);
    const nodes: Record<string, NodePatch> = {};
    const endAttempts: AttemptEnd[] = [];
    const events: PipelineEvent[] = [];
    const failures: Array<{ nodeId: string; end: AttemptEnd; transient: boolean }> = [];
    for (const { nodeId, attempt, outcome } of batch) {
      const flight = this.inFlight.get(nodeId);
      if (flight === undefined || flight.attempt !== attempt) continue;
      this.inFlight.delete(nodeId);
      const node = this.node(nodeId);
      const interrupted = this.stopping && outcome.status === "canceled" && !flight.canceled;
      const end: AttemptEnd = interrupted
        ? {
            ...interruptedAttempt(nodeId, attempt),
            session_ref: outcome.session_ref,
            corrections: outcome.corrections,
            transcript: outcome.transcript,
            usage: outcome.usage === null ? null : { ...outcome.usage },
          }
        : attemptEnd(nodeId, attempt, outcome, flight.canceled);
      const to = NODE_STATE_AFTER[end.status];
      nodes[nodeId] = {
        state: to,
        session_ref: end.session_ref ?? node.session_ref,
        handoff: to === "succeeded" || to === "blocked" ? end.handoff : null,
        error: end.error,
      };
      endAttempts.push(end);
      events.push(
        { type: "attempt_ended", node_id: nodeId, attempt, status: end.status, error: end.error },
        {
          type: "node_state",
          node_id: nodeId,
          from: node.state,
          to,
          reason: end.status === "interrupted" ? "driver stopped" : `attempt ${end.status}`,
        },
      );
      if ((to === "failed" || to === "blocked") && !this.stopping) {
        failures.push({
          nodeId,
          end,
          transient: outcome.status === "failed" && outcome.error.transient === true,
        });
      }
    }
    if (events.length === 0) return;
    await this.write({ nodes, endAttempts, events });
    for (const end of endAttempts) this.records.writeOutcome(end);
    for (const failure of failures) await this.supervise(failure.nodeId, failure.end, failure.transient);
  }

  /** `auto_supervise`: the supervisor decides about a failed or blocked node before the failure policy applies. */
  private async supervise(nodeId: string, end: AttemptEnd, transient: boolean): Promise<void> {
    const { run } = this.snapshot;
    if (!run.definition.auto_supervise || run.state !== "running" || this.budgetLeft <= 0) return;
    const previous = this.decisions.get(nodeId) ?? [];
    let decision: SupervisorDecision;
    try {
      decision = await this.supervisor.decide({
        run,
        node: this.node(nodeId),
        attempt: { ...end, transient },
        previous,
        budgetLeft: this.budgetLeft,
      });
    } catch (error) {
      decision = {
        action: "leave",
        reason: `the supervisor failed: ${(error as Error).message ?? String(error)}`,
      };
    }
    this.budgetLeft -= 1;
    this.decisions.set(nodeId, [...previous, decision]);
    const event: PipelineEvent = {
      type: "supervisor_decision",
      node_id: nodeId,
      attempt: end.attempt,
      decision,
      budget_left: this.budgetLeft,
    };
    if (decision.action === "leave") {
      await this.write({ events: [event] });
      return;
    }
    const planned = planControl(
      decision.action === "retry"
        ? { action: "retry_node", node_id: nodeId }
        : { action: "skip_node", node_id: nodeId, note: decision.note },
      this.snapshot,
    );
    if (!planned.ok) {
      await this.write({ events: [event] });
      return;
    }
    const { plan } = planned;
    await this.write({
      ...(plan.run === null ? {} : { run: { state: plan.run } }),
      nodes: plan.nodes,
      events: [
        event,
        ...plan.events.map((e) => (e.type === "node_state" ? { ...e, reason: `supervisor ${e.reason}` } : e)),
      ],
    });
  }
}

/** The node state an attempt's end leaves its node in (`interrupted`: launched again by this or the next driver). */
const NODE_STATE_AFTER: Readonly<Record<AttemptEnd["status"], NodeState>> = {
  succeeded: "succeeded",
  blocked: "blocked",
  failed: "failed",
  canceled: "canceled",
  interrupted: "ready",
};

/** `"b"` / `"b", "c"`, for event reasons. */
function nodeList(ids: readonly string[]): string {
  return ids.map((id) => `"${id}"`).join(", ");
}

/** A record failure (`pipeline_records_failed`) with what else happened appended to its message. */
function withContext(recordFailure: unknown, more: string, cause?: unknown): unknown {
  if (!(recordFailure instanceof PipelineError)) return recordFailure;
  return new PipelineError(recordFailure.code, `${recordFailure.message}${more}`, {
    ...(recordFailure.hint === undefined ? {} : { hint: recordFailure.hint }),
    cause: cause ?? recordFailure.cause,
  });
}

function describeError(error: unknown): string {
  if (isWorkflowError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function executorFailure(error: unknown): NodeOutcome {
  return {
    status: "failed",
    error: {
      code: "pipeline_executor_failed",
      message: `the executor rejected instead of resolving with an outcome: ${(error as Error)?.message ?? String(error)}`,
    },
    session_ref: null,
    corrections: 0,
    transcript: null,
    usage: null,
  };
}

/** The attempt's record from its outcome. `aborted`: this driver aborted it (cancel, or stopping). */
function attemptEnd(nodeId: string, attempt: number, outcome: NodeOutcome, aborted: boolean): AttemptEnd {
  const base = {
    node_id: nodeId,
    attempt,
    session_ref: outcome.session_ref,
    corrections: outcome.corrections,
    transcript: outcome.transcript,
    usage: outcome.usage === null ? null : { ...outcome.usage },
  };
  switch (outcome.status) {
    case "succeeded":
      return { ...base, status: "succeeded", handoff: outcome.handoff, reason: null, error: null };
    case "blocked":
      return {
        ...base,
        status: "blocked",
        handoff: outcome.handoff,
        reason: outcome.reason,
        error: { code: "pipeline_node_blocked", message: outcome.reason },
      };
    case "failed":
      return {
        ...base,
        status: "failed",
        handoff: null,
        reason: null,
        error: { code: outcome.error.code, message: outcome.error.message },
      };
    case "canceled":
      if (aborted) return { ...base, status: "canceled", handoff: null, reason: null, error: null };
      return {
        ...base,
        status: "failed",
        handoff: null,
        reason: null,
        error: {
          code: "pipeline_executor_failed",
          message: "the executor ended the attempt canceled although nothing aborted it",
        },
      };
  }
}
