import { setTimeout as sleep } from "node:timers/promises";
import { PipelineError, type PipelineRunCode } from "../codes";
import type { PipelineDefinition } from "../definition";
import type {
  Command,
  CommandResult,
  NodePatch,
  NodeState,
  PipelineRun,
  RunNode,
  RunState,
  StoredCommand,
} from "../store/records";
import type { PipelineStore } from "../store/store";
import type { AttemptEnd, PipelineEvent } from "./events";
import {
  type ControlAction,
  FAILED_NODE_STATES,
  NODE_ACTIONS,
  NODE_TRANSITIONS,
  policyCancels,
  RUN_TRANSITIONS,
} from "./transitions";

/** A run and its nodes as read from the store. */
export interface RunSnapshot {
  run: PipelineRun;
  nodes: readonly RunNode[];
}

/** What an allowed control action changes, as one store write. */
export interface ControlPlan {
  /** The run's new state; null when the action leaves it as it is. */
  run: RunState | null;
  nodes: Record<string, NodePatch>;
  /** The `run_state` and `node_state` events of the change. */
  events: PipelineEvent[];
  /** Nodes whose running attempt is aborted (cancel). */
  abort: string[];
  stopSessions: boolean;
}

export type ControlDecision =
  | { ok: true; plan: ControlPlan }
  | { ok: false; code: PipelineRunCode | "pipeline_node_not_found"; message: string };

/** Every node's transitive dependencies. */
export function ancestorsOf(definition: PipelineDefinition): Map<string, Set<string>> {
  const byId = new Map(definition.nodes.map((n) => [n.id, n]));
  const memo = new Map<string, Set<string>>();
  const visit = (id: string): Set<string> => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const found = new Set<string>();
    memo.set(id, found);
    for (const dep of byId.get(id)?.depends_on ?? []) {
      found.add(dep);
      for (const a of visit(dep)) found.add(a);
    }
    return found;
  };
  for (const node of definition.nodes) visit(node.id);
  return memo;
}

const SKIPPED_SUMMARY = "skipped";

/** The handoff a skipped node is left with: the note (or "skipped") as its summary, and `skipped: true`. */
export function skipHandoff(note: string | null): Record<string, unknown> {
  return { summary: note ?? SKIPPED_SUMMARY, skipped: true };
}

const refusal = (message: string): ControlDecision => ({
  ok: false,
  code: "pipeline_action_not_allowed",
  message,
});

/**
 * Checks a control action against the transition tables and says what it changes. The one place where
 * actions are validated: the driver and `controlPipelineRun` both apply what this returns.
 */
export function planControl(command: Command, snapshot: RunSnapshot): ControlDecision {
  const { run } = snapshot;
  const action: ControlAction = command.action;
  const runEffect = RUN_TRANSITIONS[action][run.state];
  if (runEffect === "refused") {
    return refusal(
      `${action} is not allowed while the run is ${run.state} (run ${run.run_id}); it is allowed while the run is ${allowedIn(RUN_TRANSITIONS[action])}`,
    );
  }
  // `resume` under `pause` while a failure stands would pause the run again at once: say what continues it.
  if (action === "resume" && run.failure_policy === "pause") {
    const standing = snapshot.nodes.filter((n) => FAILED_NODE_STATES.includes(n.state));
    if (standing.length > 0) {
      return refusal(
        `resume is not allowed while ${listNodes(standing)} under the failure policy pause (run ${run.run_id}): the run would pause again at once; retry_node or skip_node ${standing.length === 1 ? "it" : "each"}, or cancel the run`,
      );
    }
  }
  const plan: ControlPlan = { run: null, nodes: {}, events: [], abort: [], stopSessions: false };
  if (runEffect !== "same") {
    plan.run = runEffect.to;
    plan.events.push({ type: "run_state", from: run.state, to: runEffect.to, reason: action });
  }
  const setNode = (node: RunNode, state: NodeState, patch: NodePatch, reason: string) => {
    plan.nodes[node.node_id] = { ...patch, state };
    plan.events.push({ type: "node_state", node_id: node.node_id, from: node.state, to: state, reason });
  };

  if (NODE_ACTIONS.includes(action)) {
    const nodeId = (command as Extract<Command, { node_id: string }>).node_id;
    const node = snapshot.nodes.find((n) => n.node_id === nodeId);
    if (node === undefined) {
      return {
        ok: false,
        code: "pipeline_node_not_found",
        message: `run ${run.run_id} has no node "${nodeId}"`,
      };
    }
    const effect = NODE_TRANSITIONS[action][node.state];
    if (effect === "refused" || effect === "same" || effect === "abort") {
      return refusal(
        `${action} is not allowed for node "${nodeId}" while it is ${node.state} (the run is ${run.state}); it is allowed for a node that is ${allowedIn(NODE_TRANSITIONS[action], (e) => typeof e === "object")}`,
      );
    }
    // A node the failure policy canceled comes back when its cause is retried or skipped; retried alone,
    // it would be canceled again at once.
    if (command.action === "retry_node" && node.state === "canceled") {
      const causes = cancelCauses(snapshot, nodeId);
      if (causes.length > 0) {
        return refusal(
          `retry_node is not allowed for node "${nodeId}" while the failure policy ${run.failure_policy} keeps it canceled: ${listNodes(causes)} (the run is ${run.state}); retry_node or skip_node ${causes.length === 1 ? `"${causes[0]!.node_id}"` : "those"} first, which brings "${nodeId}" back`,
        );
      }
    }
    if (command.action === "approve_node") {
      setNode(node, effect.to, { approval_granted: true }, "approve_node");
    } else if (command.action === "retry_node") {
      // An approval is for one launch: a retried gate waits again.
      setNode(node, effect.to, { approval_granted: false, error: null, handoff: null }, "retry_node");
    } else if (command.action === "skip_node") {
      setNode(node, effect.to, { handoff: skipHandoff(command.note), error: null }, "skip_node");
    }
    if (action === "retry_node" || action === "skip_node") {
      restoreCanceled(snapshot, plan, setNode);
      // fail_fast: a failed run reopens only once no failure is left; while another node is still failed or
      // blocked nothing could run (the policy would cancel it), so the run stays failed, the node change is
      // kept, and the retry or skip of the last failure reopens the run with all of them.
      if (run.failure_policy === "fail_fast" && run.state === "failed" && plan.run === "running") {
        const stillFailed = snapshot.nodes.some((n) =>
          FAILED_NODE_STATES.includes(plan.nodes[n.node_id]?.state ?? n.state),
        );
        if (stillFailed) {
          plan.run = null;
          plan.events = plan.events.filter((e) => e.type !== "run_state");
        }
      }
    }
  } else {
    for (const node of snapshot.nodes) {
      const effect = NODE_TRANSITIONS[action][node.state];
      if (effect === "abort") plan.abort.push(node.node_id);
      else if (effect !== "same" && effect !== "refused") setNode(node, effect.to, {}, action);
    }
    plan.stopSessions = action === "stop_sessions";
  }
  return { ok: true, plan };
}

/**
 * After a retry or skip, the canceled nodes that the failure policy no longer cancels (the failure above
 * them is gone) go back to `pending`, so that the run can finish.
 */
function restoreCanceled(
  snapshot: RunSnapshot,
  plan: ControlPlan,
  setNode: (node: RunNode, state: NodeState, patch: NodePatch, reason: string) => void,
): void {
  const { run } = snapshot;
  const states = new Map<string, NodeState>(
    snapshot.nodes.map((n) => [n.node_id, plan.nodes[n.node_id]?.state ?? n.state]),
  );
  const ancestors = ancestorsOf(run.definition);
  for (const node of snapshot.nodes) {
    if (states.get(node.node_id) !== "canceled" || plan.nodes[node.node_id] !== undefined) continue;
    if (!policyCancels(run.failure_policy, node.node_id, states, ancestors)) {
      setNode(node, "pending", { error: null }, "failure removed");
    }
  }
}

/** The states a table row allows (`pending, running or paused`), for refusal messages. */
function allowedIn<E>(
  row: Readonly<Record<string, E>>,
  allows: (effect: E) => boolean = (e) => e !== "refused",
): string {
  const states = Object.entries(row)
    .filter(([, effect]) => allows(effect))
    .map(([state]) => state);
  return states.length <= 1 ? (states[0] ?? "none") : `${states.slice(0, -1).join(", ")} or ${states.at(-1)}`;
}

/** The failed or blocked nodes that make the failure policy cancel `nodeId` (none: it is free to run). */
function cancelCauses(snapshot: RunSnapshot, nodeId: string): RunNode[] {
  const { run } = snapshot;
  const failed = (n: RunNode) => n.node_id !== nodeId && FAILED_NODE_STATES.includes(n.state);
  if (run.failure_policy === "fail_fast") return snapshot.nodes.filter(failed);
  if (run.failure_policy === "continue") {
    const above = ancestorsOf(run.definition).get(nodeId) ?? new Set<string>();
    return snapshot.nodes.filter((n) => above.has(n.node_id) && failed(n));
  }
  return [];
}

/** `node "b" is failed` / `nodes "b" (failed) and "c" (blocked) are`, for refusal messages. */
function listNodes(nodes: readonly RunNode[]): string {
  if (nodes.length === 1) return `node "${nodes[0]!.node_id}" is ${nodes[0]!.state}`;
  return `nodes ${nodes.map((n) => `"${n.node_id}" (${n.state})`).join(", ")} are failed or blocked`;
}

/** Where `applyCommand` runs: a live driver (its attempts can be aborted) or a process without attempts. */
export interface ApplyContext {
  store: PipelineStore;
  owner: string;
  /** Ends the run's agent sessions (`stop_sessions`); without it `stop_sessions` is refused. */
  stopSessions?: ((runId: string) => Promise<void>) | undefined;
  /**
   * Whether this process runs the nodes' attempts. When it does not (the run's driver died), a node that
   * cancel would abort is canceled at once and its attempt ended `interrupted`.
   */
  live: boolean;
  /**
   * The answers already recorded (`command_applied` / `command_refused` events) by command ID, kept up to
   * date by the caller from the events it reads anyway. Without it `applyCommand` reads the run's events.
   */
  answered?: ReadonlyMap<number, CommandResult>;
}

/** The answer a `command_applied` or `command_refused` event records, or null for any other event. */
export function answerOf(event: PipelineEvent): { commandId: number; result: CommandResult } | null {
  if (event.type === "command_applied") return { commandId: event.command_id, result: { ok: true } };
  if (event.type === "command_refused") {
    return { commandId: event.command_id, result: { ok: false, code: event.code, message: event.message } };
  }
  return null;
}

/** Every answer recorded in `events`, by command ID. */
export function answersIn(events: readonly { event: PipelineEvent }[]): Map<number, CommandResult> {
  const answers = new Map<number, CommandResult>();
  for (const { event } of events) {
    const answer = answerOf(event);
    if (answer !== null) answers.set(answer.commandId, answer.result);
  }
  return answers;
}

/** Applies one taken command and completes it: the state change, its events, and the result, atomically per write. */
export async function applyCommand(
  context: ApplyContext,
  stored: StoredCommand,
  snapshot: RunSnapshot,
): Promise<{ result: CommandResult; plan: ControlPlan | null; snapshot: RunSnapshot }> {
  const { store, owner } = context;
  const runId = stored.run_id;
  // A command taken again after its driver died between applying it and completing it: answer as it was
  // answered then (its event says), rather than applying it twice or refusing what was done.
  const answers = context.answered ?? answersIn(await store.listEvents(runId));
  const again = answers.get(stored.command_id);
  if (again !== undefined) {
    await store.completeCommand(runId, stored.command_id, owner, again);
    return { result: again, plan: null, snapshot };
  }
  const decision = planControl(stored.command, snapshot);
  let result: CommandResult;
  let plan: ControlPlan | null = null;
  let next = snapshot;
  if (!decision.ok) {
    result = { ok: false, code: decision.code, message: decision.message };
  } else if (decision.plan.stopSessions && context.stopSessions === undefined) {
    result = {
      ok: false,
      code: "pipeline_action_not_allowed",
      message: `stop_sessions needs the executor that ran run ${runId}; none was given`,
    };
  } else {
    plan = decision.plan;
    const endAttempts: AttemptEnd[] = [];
    if (!context.live && plan.abort.length > 0) {
      const open = new Set(
        (await store.listAttempts(runId))
          .filter((a) => a.status === "running")
          .map((a) => `${a.node_id}/${a.attempt}`),
      );
      for (const nodeId of plan.abort) {
        const node = snapshot.nodes.find((n) => n.node_id === nodeId)!;
        plan.nodes[nodeId] = { state: "canceled" };
        plan.events.push({
          type: "node_state",
          node_id: nodeId,
          from: node.state,
          to: "canceled",
          reason: "cancel",
        });
        if (open.has(`${nodeId}/${node.attempts}`))
          endAttempts.push(interruptedAttempt(nodeId, node.attempts));
      }
      plan.abort = [];
    }
    const updated = await store.updateRun(runId, owner, {
      ...(plan.run === null ? {} : { run: { state: plan.run } }),
      nodes: plan.nodes,
      endAttempts,
      events: [
        ...plan.events,
        { type: "command_applied", command_id: stored.command_id, command: stored.command },
      ],
    });
    next = mergeSnapshot(snapshot, updated);
    result = { ok: true };
    if (plan.stopSessions && context.stopSessions !== undefined) {
      try {
        await context.stopSessions(runId);
      } catch (error) {
        result = {
          ok: false,
          code: "pipeline_executor_failed",
          message: `stop_sessions failed: ${(error as Error).message ?? String(error)}`,
        };
      }
    }
  }
  if (!result.ok) {
    await store.appendEvents(runId, owner, [
      {
        type: "command_refused",
        command_id: stored.command_id,
        command: stored.command,
        code: result.code,
        message: result.message,
      },
    ]);
  }
  await store.completeCommand(runId, stored.command_id, owner, result);
  return { result, plan, snapshot: next };
}

/** The record of an attempt whose driver is gone. */
export function interruptedAttempt(nodeId: string, attempt: number): AttemptEnd {
  return {
    node_id: nodeId,
    attempt,
    status: "interrupted",
    session_ref: null,
    corrections: 0,
    transcript: null,
    usage: null,
    handoff: null,
    reason: null,
    error: { code: "pipeline_driver_lost", message: "the attempt's driver died or stopped while it ran" },
  };
}

/** A snapshot with the nodes and run `updateRun` returned. */
export function mergeSnapshot(
  snapshot: RunSnapshot,
  updated: { run: PipelineRun; nodes: readonly RunNode[] },
): RunSnapshot {
  const changed = new Map(updated.nodes.map((n) => [n.node_id, n]));
  return { run: updated.run, nodes: snapshot.nodes.map((n) => changed.get(n.node_id) ?? n) };
}

export interface ControlOptions {
  /** Who sends the action (used as the lease owner when no driver holds the run). */
  owner: string;
  /** How long to wait for a live driver's answer (default 10 s); then `pipeline_control_timeout`. */
  timeoutMs?: number;
  /** How often to look for the answer (default 50 ms). */
  pollIntervalMs?: number;
  /** The lease this process takes when no driver holds the run (default 10 s; released at once). */
  leaseTtlMs?: number;
  /** Ends the run's sessions for `stop_sessions` when no driver holds the run (`executor.stopSessions`). */
  stopSessions?: (runId: string) => Promise<void>;
}

export interface ControlResult {
  result: CommandResult;
  commandId: number;
  /** `driver`: the run's live driver applied it; `direct`: no driver held the run, this process did. */
  via: "driver" | "direct";
  /** True when the run is `pending` or `running` and no driver holds it: start one (`drivePipelineRun`). */
  needsDriver: boolean;
  run: PipelineRun;
}

/**
 * Sends a control action to a run from any process. The action goes through the run's command queue: when
 * a live driver holds the run's lease it applies the action and this waits for its answer; when none does
 * (a paused run, a crashed driver, one that just ended), this process takes the lease, applies every queued
 * action, and releases it. Either way the action is checked by `planControl`, and a refusal is a result
 * (`{ ok: false, code: "pipeline_action_not_allowed", message }`), not an error.
 *
 * @example
 * const { result, needsDriver } = await controlPipelineRun(store, runId, { action: "resume" }, { owner: "cli-1" });
 * // → result { ok: true }, needsDriver true: start a driver to continue the run
 */
export async function controlPipelineRun(
  store: PipelineStore,
  runId: string,
  command: Command,
  options: ControlOptions,
): Promise<ControlResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const poll = options.pollIntervalMs ?? 50;
  const ttl = options.leaseTtlMs ?? 10_000;
  const started = Date.now();
  const sent = await store.enqueueCommand(runId, command);
  let via: ControlResult["via"] = "driver";
  for (;;) {
    const current = await store.getCommand(runId, sent.command_id);
    if (current.state === "done" && current.result !== null) {
      const run = await store.getRun(runId);
      const active = run.state === "pending" || run.state === "running";
      const needsDriver = active && (await store.getLease(runId)) === null;
      return { result: current.result, commandId: sent.command_id, via, needsDriver, run };
    }
    const lease = await store.acquireLease(runId, options.owner, ttl);
    if (lease.ok) {
      via = "direct";
      try {
        const taken = await store.takeCommands(runId, options.owner);
        let snapshot: RunSnapshot = { run: await store.getRun(runId), nodes: await store.getRunNodes(runId) };
        // Read the answers once for every command taken (not once per command).
        const answered = taken.length === 0 ? new Map() : answersIn(await store.listEvents(runId));
        for (const stored of taken) {
          const applied = await applyCommand(
            { store, owner: options.owner, live: false, stopSessions: options.stopSessions, answered },
            stored,
            snapshot,
          );
          snapshot = applied.snapshot;
          answered.set(stored.command_id, applied.result);
        }
      } finally {
        await store.releaseLease(runId, options.owner);
      }
      continue;
    }
    if (Date.now() - started >= timeoutMs) {
      throw new PipelineError(
        "pipeline_control_timeout",
        `the driver of run ${runId} (${lease.held_by.owner}) did not answer ${command.action} within ${timeoutMs} ms; command ${sent.command_id} stays queued`,
        {
          hint: "the driver may be busy or stuck; look again with icode pipeline inspect, or wait for its lease to expire",
        },
      );
    }
    await sleep(poll);
  }
}
