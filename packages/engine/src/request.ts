import type { ApprovalCallback } from "@icode/workflow-agents";
import { MAX_STRING_CHARS } from "@icode/workflow-graph";
import { type AskHandler, FailurePolicySchema } from "@icode/workflow-scheduler";
import { z } from "zod";

const INPUT_TOO_LONG = `is longer than the limit of ${MAX_STRING_CHARS} characters for one string`;

/**
 * What to run, as data a server can receive and check: `engine.run(request)` validates it with this schema,
 * and a wrong field is refused with `request_invalid` naming it. Functions (an ask handler, an abort signal)
 * travel apart, in `RunCallbacks`.
 */
export const RunRequestSchema = z.object({
  /** The workflow ID, as `list()` shows it. */
  workflowId: z.string().min(1, "must not be empty"),
  /** The start node's input text (`WorkflowValue.text`), at most 4,194,304 characters (code points). */
  input: z.string().refine(fitsStringLimit, INPUT_TOO_LONG).default(""),
  /** Start a new run of this existing workflow session (its workflow must be `workflowId`). */
  sessionId: z.string().min(1).optional(),
  /** Trust the workflow's current source and environment (saved for later runs). */
  trust: z.boolean().default(false),
  /** An overall limit covering preview, loading and execution, in seconds; `null`: none. */
  timeoutSeconds: z
    .number()
    .positive("must be a finite positive number of seconds")
    .refine(Number.isFinite, "must be a finite positive number of seconds")
    .nullable()
    .default(null),
  /** What a node failure does: `fail` ends the run (the CLI), `pause` waits for `retryNode`, … */
  policy: FailurePolicySchema.default("fail"),
  /** Python or agent node IDs that wait for `approveNode` before they start (approval gates). */
  approvals: z.array(z.string().min(1)).default([]),
  /** Concurrent agent attempts in this run (default: the engine's `maxConcurrentAgents`, else 4). */
  maxConcurrentAgents: z.number().int().min(1).optional(),
  /**
   * Whether questions (`ctx.ask`) wait for an answer given through `answer()` by anyone (a server's front
   * ends). Without it and without an `ask` handler, a question fails its node with `ask_unavailable`.
   */
  acceptAnswers: z.boolean().default(false),
  /**
   * The workflow's default model (a model profile ID or name) for a NEW session, saved with it: agent nodes
   * without `model=` whose profile binds none use it (workflow reference, "Model selection"). A session named
   * by `sessionId` keeps its saved choice.
   */
  model: z.string().min(1).nullable().default(null),
  /**
   * What a tool call that needs approval does: `bypass` runs it (the CLI), `manual` asks the `approve`
   * callback (and refuses without one).
   */
  approvalMode: z.enum(["bypass", "manual"]).default("bypass"),
  /** Overrides the spec's 60-second load-and-build limit (tests), in milliseconds. */
  loadTimeoutMs: z.number().int().positive().optional(),
});
export type RunRequest = z.input<typeof RunRequestSchema>;
export type CheckedRunRequest = z.output<typeof RunRequestSchema>;

/** What a run reports back to, and how it can be stopped: not data, so not part of `RunRequest`. */
export interface RunCallbacks {
  /** Aborting cancels the run with reason `interrupted` (or refuses it with `interrupted` before it started). */
  readonly signal?: AbortSignal;
  /** Answers `ctx.ask` questions (first valid answer wins, with `answer()`). */
  readonly ask?: AskHandler;
  /** Decides agent tool calls that need approval, under `approvalMode: "manual"`. */
  readonly approve?: ApprovalCallback;
}

/**
 * The request checked, or what is wrong with it: the first problem, naming the field. An input over the
 * string limit is `input_too_large`, anything else `request_invalid`.
 */
export function checkRunRequest(
  request: unknown,
):
  | { ok: true; request: CheckedRunRequest }
  | { ok: false; code: "request_invalid" | "input_too_large"; message: string } {
  const parsed = RunRequestSchema.safeParse(request);
  if (parsed.success) return { ok: true, request: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue === undefined || issue.path.length === 0 ? "the request" : issue.path.join(".");
  const code = issue?.message === INPUT_TOO_LONG ? "input_too_large" : "request_invalid";
  return { ok: false, code, message: `${field}: ${issue?.message ?? "invalid"}` };
}

/** Whether `text` has at most `MAX_STRING_CHARS` code points (the spec's limit for one string). */
function fitsStringLimit(text: string): boolean {
  if (text.length <= MAX_STRING_CHARS) return true;
  if (text.length > 2 * MAX_STRING_CHARS) return false;
  let points = 0;
  for (const _ of text) if (++points > MAX_STRING_CHARS) return false;
  return true;
}
