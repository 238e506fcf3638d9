import { z } from "zod";
import { type TokenUsage, TokenUsageSchema } from "./activity";
import { RunOutcomeSchema } from "./codes";
import type { EngineEvent } from "./events";
import { NodeErrorSchema } from "./executor";
import { type PendingAsk, PendingAskSchema } from "./interaction";
import { type RunOutput, RunOutputSchema } from "./value";

/**
 * What a front end shows of a run, folded from its event stream alone: every activation that has begun with
 * its state and attempts, the questions waiting for an answer (with their full questions), the approval gates
 * waiting, the outputs so far and the tokens used. Because it needs nothing but events, a server, a browser
 * client replaying a subscription and the engine build the same view.
 */

const ACTIVATION_VIEW_STATES = [
  "waiting_approval",
  "queued",
  "running",
  "retry_backoff",
  "looping",
  "awaiting_retry",
  "completed",
  "skipped",
  "failed",
  "cancelled",
] as const;

const ActivationViewSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  iteration: z.number().int().min(1),
  loop_id: z.string().nullable(),
  kind: z.enum(["python", "agent", "loop", "join"]),
  state: z.enum(ACTIVATION_VIEW_STATES),
  /** Attempts started so far (0 before the first, and for loops and joins). */
  attempts: z.number().int().min(0),
  /** The failure that put it in `failed` or `awaiting_retry`, else the last failed attempt's, or `null`. */
  error: NodeErrorSchema.nullable(),
  /** Tokens its attempts used (each attempt's last cumulative report, summed), or `null`. */
  usage: TokenUsageSchema.nullable(),
});
export type ActivationView = z.infer<typeof ActivationViewSchema>;

export const RunInspectionSchema = z.object({
  run_id: z.string(),
  state: z.enum(["running", "paused", "finished"]),
  /** Set once the run has ended. */
  outcome: RunOutcomeSchema.nullable(),
  /** In the order they began. */
  activations: z.array(ActivationViewSchema),
  pending_questions: z.array(PendingAskSchema),
  /** Activations waiting at an approval gate. */
  waiting_approvals: z.array(z.string()),
  /** Completed output nodes so far, in `output()` order (at the end: the run's outputs). */
  outputs: z.array(RunOutputSchema),
  /** Tokens used by all agent attempts so far, or `null` when no attempt reported any. */
  usage: TokenUsageSchema.nullable(),
  /** The `seq` of the last event folded in (-1 before any). */
  last_seq: z.number().int().min(-1),
});
export type RunInspection = z.infer<typeof RunInspectionSchema>;

/** Folds events into a `RunInspection`; `apply` them in `seq` order (repeats are ignored). */
export class RunView {
  private readonly runId: string;
  private state: RunInspection["state"] = "running";
  private outcome: RunInspection["outcome"] = null;
  private readonly activations = new Map<string, ActivationView>();
  private readonly asks = new Map<string, PendingAsk>();
  private outputOrder: readonly string[] = [];
  private readonly outputs = new Map<string, RunOutput>();
  private finalOutputs: RunOutput[] | null = null;
  /** Each attempt's latest (cumulative) usage, by activation. */
  private readonly usageByAttempt = new Map<string, Map<number, TokenUsage>>();
  private lastSeq = -1;

  constructor(runId: string) {
    this.runId = runId;
  }

  apply(event: EngineEvent): void {
    if (event.seq <= this.lastSeq) return;
    this.lastSeq = event.seq;
    switch (event.type) {
      case "workflow_run_start":
        this.outputOrder = event.outputs;
        return;
      case "workflow_run_paused":
        this.state = "paused";
        return;
      case "workflow_run_resumed":
        this.state = "running";
        return;
      case "workflow_run_end":
        this.state = "finished";
        this.outcome = event.outcome;
        this.finalOutputs = event.outputs;
        this.asks.clear();
        return;
      case "node_started":
        this.activations.set(event.activation_id, {
          node_id: event.node_id,
          activation_id: event.activation_id,
          iteration: event.iteration,
          loop_id: event.loop_id,
          kind: event.kind,
          state: event.kind === "loop" ? "looping" : event.kind === "join" ? "running" : "queued",
          attempts: 0,
          error: null,
          usage: null,
        });
        return;
      case "node_waiting_approval":
        this.set(event.activation_id, { state: "waiting_approval" });
        return;
      case "node_approved":
      case "attempt_queued":
      case "node_retried":
        this.set(event.activation_id, { state: "queued" });
        return;
      case "attempt_started":
        this.set(event.activation_id, { state: "running", attempts: event.attempt });
        return;
      case "attempt_failed":
        this.set(event.activation_id, {
          error: event.error,
          ...(event.will_retry
            ? { state: (event.retry_delay_ms ?? 0) > 0 ? "retry_backoff" : "queued" }
            : {}),
        });
        return;
      case "node_awaiting_retry":
        this.set(event.activation_id, { state: "awaiting_retry" });
        return;
      case "node_failed":
        this.set(event.activation_id, { state: "failed", error: event.error });
        return;
      case "node_cancelled":
        this.set(event.activation_id, { state: "cancelled" });
        return;
      case "node_skipped":
        this.set(event.activation_id, { state: "skipped" });
        return;
      case "node_completed": {
        this.set(event.activation_id, { state: "completed" });
        if (event.loop_id === null && this.outputOrder.includes(event.node_id)) {
          this.outputs.set(event.node_id, {
            node_id: event.node_id,
            activation_id: event.activation_id,
            text: event.value.text,
            data: event.value.data,
          });
        }
        return;
      }
      case "loop_iteration":
        this.set(event.activation_id, { state: "looping" });
        return;
      case "question":
        this.asks.set(event.ask_id, {
          ask_id: event.ask_id,
          node_id: event.node_id,
          activation_id: event.activation_id,
          attempt: event.attempt,
          question_id: event.question_id,
          questions: event.questions,
        });
        return;
      case "answer":
        this.asks.delete(event.ask_id);
        return;
      case "agent_activity": {
        if (event.activity.kind !== "usage") return;
        let attempts = this.usageByAttempt.get(event.activation_id);
        if (attempts === undefined) {
          attempts = new Map();
          this.usageByAttempt.set(event.activation_id, attempts);
        }
        attempts.set(event.attempt, event.activity.usage);
        this.set(event.activation_id, { usage: sumUsage([...attempts.values()]) });
        return;
      }
      default:
        return;
    }
  }

  snapshot(): RunInspection {
    const activations = [...this.activations.values()].map((a) => ({ ...a }));
    const outputs =
      this.finalOutputs ??
      this.outputOrder.flatMap((id) => {
        const output = this.outputs.get(id);
        return output === undefined ? [] : [output];
      });
    return {
      run_id: this.runId,
      state: this.state,
      outcome: this.outcome,
      activations,
      pending_questions: [...this.asks.values()],
      waiting_approvals: activations
        .filter((a) => a.state === "waiting_approval")
        .map((a) => a.activation_id),
      outputs,
      usage: sumUsage(activations.map((a) => a.usage)),
      last_seq: this.lastSeq,
    };
  }

  private set(activationId: string, change: Partial<ActivationView>): void {
    const view = this.activations.get(activationId);
    if (view !== undefined) Object.assign(view, change);
  }
}

/** The sum of several usages (attempts of an activation, activations of a run); `null` when there are none. */
function sumUsage(list: readonly (TokenUsage | null)[]): TokenUsage | null {
  let total: TokenUsage | null = null;
  for (const usage of list) {
    if (usage === null) continue;
    if (total === null) {
      total = { ...usage, cost: usage.cost === null ? null : { ...usage.cost } };
      continue;
    }
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.total_tokens += usage.total_tokens;
    total.cached_input_tokens = addNullable(total.cached_input_tokens, usage.cached_input_tokens);
    total.reasoning_tokens = addNullable(total.reasoning_tokens, usage.reasoning_tokens);
    if (usage.cost !== null) {
      total.cost =
        total.cost === null || total.cost.currency !== usage.cost.currency
          ? (total.cost ?? { ...usage.cost })
          : { amount: total.cost.amount + usage.cost.amount, currency: total.cost.currency };
    }
  }
  return total;
}

function addNullable(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : a + b;
}
