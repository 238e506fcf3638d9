import type { FailurePolicy } from "../definition";
import { type Command, NODE_STATES, type NodeState, RUN_STATES, type RunState } from "../store/records";

/**
 * The run and node state machines as data (docs/pipelines.md, "Run control"). Every control action × every
 * run state and every node state is either allowed (and says what it does) or refused with
 * `pipeline_action_not_allowed`; `planControl` (control.ts) reads these tables and nothing else decides.
 */

export const CONTROL_ACTIONS = [
  "pause",
  "resume",
  "cancel",
  "approve_node",
  "retry_node",
  "skip_node",
  "stop_sessions",
] as const satisfies readonly Command["action"][];
export type ControlAction = (typeof CONTROL_ACTIONS)[number];

/** The actions that name one node (`node_id`); the others act on the whole run. */
export const NODE_ACTIONS: readonly ControlAction[] = ["approve_node", "retry_node", "skip_node"];

/** What an action does to the run: moves it to a state, leaves it as it is, or is refused. */
export type RunEffect = { to: RunState } | "same" | "refused";
/**
 * What an action does to a node: for a node action, to the node it names (`refused` refuses the action);
 * for a run action, to every node of the run (`abort`: its attempt's signal is aborted and the node becomes
 * `canceled` when the attempt ends).
 */
export type NodeEffect = { to: NodeState } | "same" | "abort" | "refused";

const to = <S>(state: S) => ({ to: state });
const runRow = (cells: Partial<Record<RunState, RunEffect>>): Record<RunState, RunEffect> =>
  Object.fromEntries(RUN_STATES.map((s) => [s, cells[s] ?? "refused"])) as Record<RunState, RunEffect>;
const nodeRow = (
  cells: Partial<Record<NodeState, NodeEffect>>,
  otherwise: NodeEffect,
): Record<NodeState, NodeEffect> =>
  Object.fromEntries(NODE_STATES.map((s) => [s, cells[s] ?? otherwise])) as Record<NodeState, NodeEffect>;

/** Action × run state. Terminal runs (`succeeded`, `failed`, `canceled`) take only what is listed. */
export const RUN_TRANSITIONS: Readonly<Record<ControlAction, Readonly<Record<RunState, RunEffect>>>> = {
  pause: runRow({ pending: to("paused"), running: to("paused") }),
  resume: runRow({ paused: to("running") }),
  cancel: runRow({ pending: to("canceled"), running: to("canceled"), paused: to("canceled") }),
  approve_node: runRow({ pending: "same", running: "same", paused: "same" }),
  // Retrying or skipping is how a paused run continues, and how a failed run is reopened. planControl adds
  // two conditions: resume under pause while a failure stands is refused; under fail_fast a failed run
  // stays failed while another failure stands.
  retry_node: runRow({ pending: "same", running: "same", paused: to("running"), failed: to("running") }),
  skip_node: runRow({ pending: "same", running: "same", paused: to("running"), failed: to("running") }),
  stop_sessions: runRow({ succeeded: "same", failed: "same", canceled: "same" }),
};

/** Action × node state (see `NodeEffect`). */
export const NODE_TRANSITIONS: Readonly<Record<ControlAction, Readonly<Record<NodeState, NodeEffect>>>> = {
  pause: nodeRow({}, "same"),
  resume: nodeRow({}, "same"),
  cancel: nodeRow(
    {
      pending: to("canceled"),
      ready: to("canceled"),
      waiting_approval: to("canceled"),
      launching: "abort",
      running: "abort",
    },
    "same",
  ),
  approve_node: nodeRow({ waiting_approval: to("ready") }, "refused"),
  retry_node: nodeRow({ failed: to("pending"), blocked: to("pending"), canceled: to("pending") }, "refused"),
  skip_node: nodeRow(
    {
      pending: to("succeeded"),
      ready: to("succeeded"),
      waiting_approval: to("succeeded"),
      blocked: to("succeeded"),
      failed: to("succeeded"),
      canceled: to("succeeded"),
    },
    "refused",
  ),
  stop_sessions: nodeRow({}, "same"),
};

/** The changes the driver itself makes to a node, with why. Control actions' changes are in NODE_TRANSITIONS. */
export const DRIVER_NODE_TRANSITIONS: ReadonlyArray<{ from: NodeState; to: NodeState; when: string }> = [
  { from: "pending", to: "ready", when: "every dependency succeeded" },
  {
    from: "pending",
    to: "canceled",
    when: "the failure policy cancels it (fail_fast; continue below a failure)",
  },
  { from: "ready", to: "waiting_approval", when: "requires_approval and not approved for this launch" },
  { from: "ready", to: "launching", when: "the run is running, a launch slot is free, any gate approved" },
  { from: "ready", to: "canceled", when: "fail_fast after a failure" },
  { from: "waiting_approval", to: "canceled", when: "fail_fast after a failure" },
  { from: "launching", to: "running", when: "the executor reports its worker running" },
  ...(["launching", "running"] as const).flatMap((from) => [
    { from, to: "succeeded" as const, when: "the attempt ended with a valid handoff" },
    { from, to: "blocked" as const, when: "the attempt ended blocked" },
    { from, to: "failed" as const, when: "the attempt failed" },
    { from, to: "canceled" as const, when: "the attempt was aborted by cancel" },
    { from, to: "ready" as const, when: "the attempt's driver died or stopped: a new attempt follows" },
  ]),
  { from: "canceled", to: "pending", when: "a retry or skip removed the failure that canceled it" },
];

/** The changes the driver makes to the run. */
export const DRIVER_RUN_TRANSITIONS: ReadonlyArray<{ from: RunState; to: RunState; when: string }> = [
  { from: "pending", to: "running", when: "a driver starts advancing it" },
  {
    from: "running",
    to: "paused",
    when: "failure policy pause: a node failed or blocked (one the run has not paused for yet), or nothing else can advance while a failure stands",
  },
  { from: "running", to: "succeeded", when: "every node succeeded (skipped nodes count)" },
  {
    from: "running",
    to: "failed",
    when: "nothing can advance and some node failed, blocked or was canceled",
  },
];

export function isDriverNodeTransition(from: NodeState, next: NodeState): boolean {
  return DRIVER_NODE_TRANSITIONS.some((t) => t.from === from && t.to === next);
}

/** Nodes that do not take part any more: the run converges once every node is in one of these. */
export const FINISHED_NODE_STATES: readonly NodeState[] = ["succeeded", "failed", "blocked", "canceled"];
/** A blocked node counts as a failure for the failure policy. */
export const FAILED_NODE_STATES: readonly NodeState[] = ["failed", "blocked"];
const NOT_STARTED: readonly NodeState[] = ["pending", "ready", "waiting_approval"];

/**
 * Whether the failure policy keeps a node that has not started canceled, given every node's state:
 * `fail_fast` cancels every node not started once any node failed or blocked; `continue` cancels the nodes
 * below a failed or blocked node (they can never run); `pause` cancels nothing.
 */
export function policyCancels(
  policy: FailurePolicy,
  nodeId: string,
  states: ReadonlyMap<string, NodeState>,
  ancestors: ReadonlyMap<string, ReadonlySet<string>>,
): boolean {
  if (policy === "pause") return false;
  if (policy === "fail_fast") {
    for (const state of states.values()) if (FAILED_NODE_STATES.includes(state)) return true;
    return false;
  }
  for (const ancestor of ancestors.get(nodeId) ?? []) {
    const state = states.get(ancestor);
    if (state !== undefined && FAILED_NODE_STATES.includes(state)) return true;
  }
  return false;
}

export function isNotStarted(state: NodeState): boolean {
  return NOT_STARTED.includes(state);
}

/** How an effect is written in the doc tables (and parsed back by the test that compares them). */
export function effectText(effect: RunEffect | NodeEffect): string {
  if (effect === "same") return "—";
  if (effect === "refused") return "refused";
  if (effect === "abort") return "abort → `canceled`";
  return `→ \`${effect.to}\``;
}
