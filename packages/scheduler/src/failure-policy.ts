import type { FailurePolicy, RunOutcome } from "./codes";

/**
 * What a run does once a node has failed and will not retry automatically (`FAILURE_POLICIES` in ./codes
 * says what each policy means):
 * - `end`: the run ends now with the node's failure;
 * - `await_retry`: the node waits in `awaiting_retry` for `retryNode`, `skipNode` or `cancel`;
 * - `stop_new_work`: nothing new starts; attempts in flight finish, then the run ends failed;
 * - `cut_off`: what depends on the node can never run; independent branches go on, the run ends failed.
 */
export type FailureAction = "end" | "await_retry" | "stop_new_work" | "cut_off";

/**
 * The action for a failure with `outcome` under `policy`. A lost worker always ends the run (nothing more can
 * run on it), and so does an exhausted loop under `pause` (a retry cannot give it more iterations).
 */
export function failureAction(policy: FailurePolicy, outcome: RunOutcome): FailureAction {
  if (outcome === "worker_lost" || policy === "fail") return "end";
  if (policy === "pause") return outcome === "loop_exhausted" ? "end" : "await_retry";
  return policy === "fail_fast" ? "stop_new_work" : "cut_off";
}

/** The run outcome a node failure of `errorClass` leads to. */
export function failureOutcome(errorClass: string): RunOutcome {
  if (errorClass === "worker_lost") return "worker_lost";
  if (errorClass === "loop_exhausted") return "loop_exhausted";
  return "node_failed";
}
