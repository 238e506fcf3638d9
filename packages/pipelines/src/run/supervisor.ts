import type { PipelineRun, RunNode } from "../store/records";
import type { AttemptEnd, SupervisorDecision } from "./events";

/** What a supervisor is told when a node's attempt failed or blocked, before the failure policy applies. */
export interface SupervisionContext {
  run: PipelineRun;
  /** The node as it is now (`failed` or `blocked`, `attempts` counting the attempt that just ended). */
  node: RunNode;
  /** The attempt that ended, with the outcome's record. */
  attempt: AttemptEnd & {
    /** The executor marked the failure transient (a dropped connection, a rate limit): worth another try. */
    transient: boolean;
  };
  /** The supervisor's earlier decisions about this node in this run, oldest first. */
  previous: readonly SupervisorDecision[];
  /** Decisions this run may still take, this one included (≥ 1). */
  budgetLeft: number;
}

/**
 * Consulted by the driver when a node fails or blocks while the run is running and `auto_supervise` is on.
 * `retry` starts a new attempt (as `retry_node`), `skip` skips the node with a note (as `skip_node`),
 * `leave` lets the failure policy apply. An agent-backed supervisor (a profile asked for a decision) plugs
 * into the same interface.
 */
export interface Supervisor {
  decide(context: SupervisionContext): SupervisorDecision | Promise<SupervisorDecision>;
}

/** Decisions per run, unless `drivePipelineRun` is given another budget. */
export const DEFAULT_SUPERVISION_BUDGET = 3;

/**
 * The built-in supervisor, deterministic: an attempt that failed with an error the executor marked transient
 * is retried once per node; everything else (a blocked node, a second transient failure, a permanent error)
 * is left to the failure policy.
 */
export const defaultSupervisor: Supervisor = {
  decide({ attempt, previous }) {
    if (attempt.status !== "failed" || !attempt.transient) {
      return {
        action: "leave",
        reason: `attempt ${attempt.attempt} ${attempt.status} without a transient error`,
      };
    }
    if (previous.some((d) => d.action === "retry")) {
      return { action: "leave", reason: "the node was already retried once after a transient error" };
    }
    return {
      action: "retry",
      reason: `transient error ${attempt.error?.code ?? "unknown"}: one more attempt`,
    };
  },
};
