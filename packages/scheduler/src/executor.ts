import type { AgentNode, JoinNode, LoopNode, PythonNode } from "@icode/workflow-graph";
import { z } from "zod";
import type { AgentActivity } from "./activity";
import type { AskRequest, AskResponse } from "./interaction";
import { type SourceValue, type WorkflowValue, WorkflowValueSchema } from "./value";

/**
 * The executor contract: what the scheduler asks of whoever really runs nodes (the Python bridge, the
 * agent runtime, or a fake in tests). Every call gets a plain-data request and an `io` carrying its
 * `AbortSignal` (and, for attempts, the `emit`/`ask` callbacks), and returns a promise of a discriminated
 * result; node errors are results, never rejections. A rejected promise or a thrown call is
 * an executor bug and fails the node with `internal_error`.
 *
 * Results are trusted as typed (the scheduler does not re-validate 16 MiB values per node); the schemas
 * below are for executors that receive results over a wire and for tests.
 */

/** A node error as the executor classifies it. `retryable` is the executor's verdict; the scheduler
 * still never retries the classes in `NEVER_RETRIED_CLASSES`, nor beyond `Retry.max_attempts`. */
export const NodeErrorSchema = z.object({
  class: z.string().min(1),
  message: z.string(),
  retryable: z.boolean(),
  /** Python traceback (user frames), or `null`. */
  traceback: z.string().nullable(),
});
export type NodeError = z.infer<typeof NodeErrorSchema>;

/**
 * The outgoing conditional edges of one finished node, as edge keys (`source->target`): `when` edges are
 * evaluated independently; `switch` cases are evaluated in order, the first true one is selected and later
 * ones are not evaluated, else `default` is selected. Unconditional edges are not listed.
 */
const ConditionBatchSchema = z.object({
  when: z.array(z.string()),
  switch: z.object({ cases: z.array(z.string()), default: z.string() }).nullable(),
});
export type ConditionBatch = z.infer<typeof ConditionBatchSchema>;

/** The edge keys of a `ConditionBatch` that pass the value on: the true `when` edges plus the one selected
 * switch edge. Every other listed edge does not pass. */
const EdgeDecisionsSchema = z.object({ passed: z.array(z.string()) });
export type EdgeDecisions = z.infer<typeof EdgeDecisionsSchema>;

/**
 * One attempt of a Python or agent node. A Python executor that can evaluate the node's outgoing conditions
 * in the same round trip returns `decisions` with the value (and enforces the 30 s condition limit itself,
 * or calls `AttemptIO.conditionsStarted()` so the scheduler does); without `decisions` the scheduler asks
 * `evaluateConditions`. A condition that raised is `{ status: "failed", phase: "conditions" }`.
 */
const AttemptResultSchema = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("completed"),
    value: WorkflowValueSchema,
    decisions: EdgeDecisionsSchema.nullable().optional(),
  }),
  z.object({
    status: z.literal("failed"),
    error: NodeErrorSchema,
    /** `conditions`: the function returned but an outgoing condition failed. Default `node`. */
    phase: z.enum(["node", "conditions"]).optional(),
  }),
]);
export type AttemptResult = z.infer<typeof AttemptResultSchema>;

const ConditionsResultSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("decided"), decisions: EdgeDecisionsSchema }),
  z.object({ status: z.literal("failed"), error: NodeErrorSchema }),
]);
export type ConditionsResult = z.infer<typeof ConditionsResultSchema>;

const UntilResultSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("decided"), stop: z.boolean() }),
  z.object({ status: z.literal("failed"), error: NodeErrorSchema }),
]);
export type UntilResult = z.infer<typeof UntilResultSchema>;

const CombineResultSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("completed"), value: WorkflowValueSchema }),
  z.object({ status: z.literal("failed"), error: NodeErrorSchema }),
]);
export type CombineResult = z.infer<typeof CombineResultSchema>;

/**
 * The control side of one executor call: requests are plain data (safe to spread, log or serialize), the
 * abort travels here, as a signal or as a listener. The `AbortController` behind `signal` is created when
 * `signal` is first read, so an executor that never needs it pays nothing; a call aborted before that read
 * sees an aborted signal. An executor that only needs to react to the abort can use `onAbort`, which
 * allocates nothing for the (usual) call that is never aborted.
 */
export interface CallIO {
  /** Aborted when the call's limit passes, the run ends, or the node is skipped; `reason` says which
   * (`timeout`, a cancel reason such as `user_cancelled`, `run_failed`, `skipped`). */
  readonly signal: AbortSignal;
  /** Calls `listener` once, synchronously, with the same reason when `signal` would abort (at once if the
   * call was already aborted); never after the call settled normally. A listener that throws is ignored. */
  onAbort(listener: (reason: string) => void): void;
}

/**
 * Callbacks of one attempt. Calls after the attempt ended (timed out, cancelled, superseded) are dropped,
 * and `ask` then resolves `{ status: "cancelled" }`.
 */
export interface AttemptIO extends CallIO {
  /** `ctx.emit(text)`: progress text, recorded as an `emit` event. */
  emit(text: string): void;
  /** `ctx.ask(...)`: recorded as `question`/`answer` summaries; waiting counts toward the node timeout. */
  ask(request: AskRequest): Promise<AskResponse>;
  /** Agent progress (text as it streams, tool calls, plans, permissions, usage…): an `agent_activity` event. */
  activity(activity: AgentActivity): void;
  /** The function returned and the batched outgoing conditions are being evaluated: the node timeout
   * stops and the 30 s condition limit starts. Optional for executors that enforce that limit themselves. */
  conditionsStarted(): void;
}

interface AttemptRequestBase {
  readonly runId: string;
  readonly activationId: string;
  /** 1 for top-level nodes, the loop iteration for body nodes. */
  readonly iteration: number;
  /** 1-based, counted over the activation's whole life (automatic and manual retries). */
  readonly attempt: number;
  readonly input: WorkflowValue;
  /** The node's per-attempt limit in milliseconds, or `null`. The scheduler enforces it with its clock;
   * it is given so that a worker can also stop the function on its side. */
  readonly timeoutMs: number | null;
}

export interface PythonAttemptRequest extends AttemptRequestBase {
  readonly node: PythonNode;
  /** The node's conditional outgoing edges, to evaluate on the returned value in the same round trip. */
  readonly conditions: ConditionBatch | null;
  /** Limit of that batch of condition evaluations (30 s). */
  readonly conditionTimeoutMs: number;
}

export interface AgentAttemptRequest extends AttemptRequestBase {
  readonly node: AgentNode;
  /** The attempt whose conversation this one continues (after a failure or timeout of the agent itself),
   * or `null` to start from the input (first attempt, or the agent had finished and a later step failed). */
  readonly continueFrom: number | null;
}

export interface ConditionsRequest {
  readonly runId: string;
  readonly nodeId: string;
  readonly activationId: string;
  /** The source node's output that the conditions receive. */
  readonly value: WorkflowValue;
  readonly conditions: ConditionBatch;
  readonly timeoutMs: number;
}

export interface UntilRequest {
  readonly runId: string;
  readonly node: LoopNode;
  readonly activationId: string;
  readonly iteration: number;
  /** The iteration's exit output. */
  readonly value: WorkflowValue;
  readonly timeoutMs: number;
}

export interface CombineRequest {
  readonly runId: string;
  readonly node: JoinNode;
  readonly activationId: string;
  /** In `sources` declaration order; skipped or unselected sources left out; never empty. */
  readonly sources: readonly SourceValue[];
  readonly timeoutMs: number;
}

/**
 * Whoever runs the nodes. Only the members a Definition needs must be present (`startRun` checks): a
 * Definition without agent nodes needs no `runAgent`. Typically the Python bridge supplies `runPython`,
 * `evaluateConditions`, `evaluateUntil` and `combine`, and the agent runtime `runAgent`.
 */
export interface Executors {
  runPython?(request: PythonAttemptRequest, io: AttemptIO): Promise<AttemptResult>;
  runAgent?(request: AgentAttemptRequest, io: AttemptIO): Promise<AttemptResult>;
  evaluateConditions?(request: ConditionsRequest, io: CallIO): Promise<ConditionsResult>;
  evaluateUntil?(request: UntilRequest, io: CallIO): Promise<UntilResult>;
  combine?(request: CombineRequest, io: CallIO): Promise<CombineResult>;
}

/**
 * Forwards questions to the user. Its answers are checked like `answer()`'s; a handler that throws or answers
 * something else fails the attempt with `ask_handler_failed` and its message.
 */
export type AskHandler = (
  request: AskRequest,
  context: {
    readonly nodeId: string;
    readonly activationId: string;
    readonly attempt: number;
    /** The ask's ID, as `answer()` and the `question` event name it. */
    readonly askId: string;
    readonly signal: AbortSignal;
  },
) => Promise<AskResponse>;
