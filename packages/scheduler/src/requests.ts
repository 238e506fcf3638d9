import type { Activation, Call, Received } from "./activation";
import type { AttemptChannel } from "./attempt-io";
import type {
  AgentAttemptRequest,
  CombineRequest,
  ConditionsRequest,
  Executors,
  PythonAttemptRequest,
  UntilRequest,
} from "./executor";
import type { IndexedNode } from "./graph-index";
import { COMBINE_TIMEOUT_MS, CONDITION_TIMEOUT_MS, UNTIL_TIMEOUT_MS } from "./limits";
import type { SourceValue } from "./value";

/** What an activation has in flight with an executor. */
export type Work = "attempt" | "conditions" | "until" | "combine";

type Node<K extends IndexedNode["node"]["kind"]> = Extract<IndexedNode["node"], { kind: K }>;

/**
 * Builds the plain-data request for `work` on `act` and calls the executor that does it (`startRun` checked
 * that each one the Definition needs is there). Requests carry values by reference, never copies.
 */
export function callExecutor(
  runId: string,
  executors: Executors,
  act: Activation,
  work: Work,
  call: Call,
): Promise<unknown> {
  const n = act.n;
  const node = n.node;
  switch (work) {
    case "attempt": {
      // Two literals rather than a shared spread: this runs once per attempt, thousands of times a run.
      const io = call as AttemptChannel;
      if (node.kind === "python") {
        const request: PythonAttemptRequest = {
          runId,
          activationId: act.id,
          iteration: act.iteration,
          attempt: act.attempt,
          input: act.input!,
          timeoutMs: n.timeoutMs,
          node,
          conditions: n.conditions,
          conditionTimeoutMs: CONDITION_TIMEOUT_MS,
        };
        return executors.runPython!(request, io);
      }
      const request: AgentAttemptRequest = {
        runId,
        activationId: act.id,
        iteration: act.iteration,
        attempt: act.attempt,
        input: act.input!,
        timeoutMs: n.timeoutMs,
        node: node as Node<"agent">,
        continueFrom: act.continueFrom,
      };
      return executors.runAgent!(request, io);
    }
    case "conditions": {
      const request: ConditionsRequest = {
        runId,
        nodeId: n.id,
        activationId: act.id,
        value: act.value!,
        conditions: n.conditions!,
        timeoutMs: CONDITION_TIMEOUT_MS,
      };
      return executors.evaluateConditions!(request, call);
    }
    case "until": {
      const loop = act.loop!;
      const request: UntilRequest = {
        runId,
        node: node as Node<"loop">,
        activationId: act.id,
        iteration: loop.iteration,
        value: loop.exitValue!,
        timeoutMs: UNTIL_TIMEOUT_MS,
      };
      return executors.evaluateUntil!(request, call);
    }
    case "combine": {
      const request: CombineRequest = {
        runId,
        node: node as Node<"join">,
        activationId: act.id,
        sources: sourceValues(act),
        timeoutMs: COMBINE_TIMEOUT_MS,
      };
      return executors.combine!(request, call);
    }
  }
}

/** A join's received values as `combine` sees them, in `sources` order. */
export function sourceValues(act: Activation): SourceValue[] {
  return (act.inputs as Received[]).map((r) => ({
    node_id: r.node_id,
    activation_id: r.activationId!,
    value: r.value,
  }));
}
