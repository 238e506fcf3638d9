import type { AgentProfile, Approval, ModelProfile } from "@icode/agent-profiles";
import { type ApprovalMode, decideApproval, retryDelayMs } from "@icode/agent-profiles/policy";
import type { AgentActivity } from "@icode/workflow-scheduler";
import { jsonSchema, type ModelMessage, type ToolSet, tool } from "ai";
import type { ApprovalCallback } from "../attempt";
import type { AgentTool, ToolOutcome, Toolset } from "../tool";
import { describe, failure, type ModelFailure } from "./classify";
import {
  continuationMessage,
  estimateTokens,
  NOTE_HEADER,
  NOTE_INSTRUCTIONS,
  noteOutputCap,
  renderConversation,
  reservedTokens,
  wouldOverflow,
} from "./compaction";
import type { Conversation, PendingCall, ToolCallRecord } from "./conversation";
import type { DispatcherPool } from "./http";
import { type ModelReply, type ModelRequest, ModelRequestError, sendModelRequest } from "./model-request";
import { type ModelCache, resolveModel } from "./provider";
import { TextCoalescer } from "./text-coalescer";
import type { UsageMeter } from "./usage";

/** What the loop needs from its runner. */
export interface LoopDeps {
  readonly pool: DispatcherPool;
  readonly models: ModelCache;
  /** Transient-error retries per model request (`maxTransientRetries`). */
  readonly maxRetries: number;
  /** Waits before a retry; resolves early (or rejects) when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** One agent's run to completion: a node attempt, or a sub-agent called by one. */
export interface AgentRun {
  readonly profile: AgentProfile;
  /** The approval rules in force (a sub-agent uses its parent's). */
  readonly approval: Approval;
  readonly approvalMode: ApprovalMode;
  readonly approve: ApprovalCallback | undefined;
  /** Who asks, for the approval callback. */
  readonly identity: { readonly runId: string; readonly activationId: string; readonly attempt: number };
  readonly model: ModelProfile;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly workspace: string;
  readonly system: string;
  readonly toolset: Toolset;
  readonly conversation: Conversation;
  readonly signal: AbortSignal;
  readonly activity: (activity: AgentActivity) => void;
  readonly usage: UsageMeter;
  /** Put before tool call ids and titles (a sub-agent's calls, in its parent's records). */
  readonly idPrefix: string;
  readonly titlePrefix: string;
  /** Where tool call records go (a sub-agent's go to its parent's transcript). */
  readonly record: (record: ToolCallRecord) => void;
  /** Adds a transcript message (a sub-agent adds none to its parent's). */
  readonly note: (
    message: { role: "assistant" | "tool" | "user"; content: string } & Partial<{
      tool_calls: { id: string; name: string; input: unknown }[];
      tool_call_id: string;
      is_error: boolean;
    }>,
  ) => void;
}

export type LoopResult = { ok: true; text: string } | { ok: false; failure: ModelFailure };

/** How many characters of a tool result go into its `tool_call` activity. */
const RESULT_SUMMARY_CHARS = 200;

/**
 * The step loop: one model request per step (streamed when the model profile says `stream`), then the tool
 * calls it asked for, each decided by the approval rules, run, recorded and answered, until a reply asks
 * for none. Transient request errors are retried within the attempt; an overflowing conversation is
 * compacted (before a request that would not fit, or once after the provider says it does not).
 */
export async function runAgentLoop(run: AgentRun, deps: LoopDeps): Promise<LoopResult> {
  const tools = new Map(run.toolset.tools.map((t) => [t.name, t]));
  const sdkTools = toSdkTools(run.toolset.tools);
  const toolsChars =
    sdkTools === undefined ? 0 : JSON.stringify(run.toolset.tools.map((t) => t.inputSchema)).length;
  const conv = run.conversation;
  const emitted: string[] = [];
  const side = { used: 0, gaveUp: false };
  const warned = new Set<string>();
  const aborted = (): LoopResult => ({
    ok: false,
    failure: failure("agent_aborted", abortMessage(run.signal)),
  });

  while (true) {
    if (run.signal.aborted) return aborted();
    if (conv.pending.length > 0) {
      await runPending(run, tools);
      if (run.signal.aborted) return aborted();
    }
    if (
      run.profile.compaction.enabled &&
      !side.gaveUp &&
      conv.messages.length > 1 &&
      wouldOverflow(estimateTokens(run.system, conv.messages, toolsChars), run.model)
    ) {
      // One that could not be made is not tried again before each step; the provider's overflow still is.
      side.gaveUp = !(await compact(run, deps, side, toolsChars));
      if (run.signal.aborted) return aborted();
    }

    const texts = new TextCoalescer((text) => run.activity({ kind: "text", text }));
    const thoughts = new TextCoalescer((text) => run.activity({ kind: "thought", text }));
    const sent = await requestWithRetries(run, deps, {
      build: () => ({
        system: run.system,
        messages: conv.messages,
        tools: sdkTools,
        maxOutputTokens: run.model.max_output_tokens,
        stream: run.model.stream,
        onText: (d) => texts.push(d),
        onThought: (d) => thoughts.push(d),
        onBoundary: () => {
          thoughts.flush();
          texts.flush();
        },
      }),
      onOverflow: () => compact(run, deps, side, toolsChars),
    });
    texts.flush();
    thoughts.flush();
    if (!sent.ok) return sent;
    const reply = sent.reply;
    conv.messages.push(...reply.messages);
    run.note({
      role: "assistant",
      content: reply.text,
      ...(reply.toolCalls.length === 0
        ? {}
        : {
            tool_calls: reply.toolCalls.map((c) => ({
              id: run.idPrefix + c.toolCallId,
              name: c.toolName,
              input: c.input,
            })),
          }),
    });
    if (!run.model.stream) {
      if (reply.reasoning !== "") run.activity({ kind: "thought", text: reply.reasoning });
      if (reply.text !== "") run.activity({ kind: "text", text: reply.text });
    }
    if (reply.text !== "") emitted.push(reply.text);
    for (const w of reply.warnings) {
      if (warned.has(w)) continue;
      warned.add(w);
      run.activity({
        kind: "warning",
        code: "model_warning",
        message: `the model provider's SDK says: ${w}`,
      });
    }
    if (run.usage.add(reply.usage)) run.activity({ kind: "usage", usage: run.usage.total });
    if (reply.finishReason === "content-filter") {
      return {
        ok: false,
        failure: failure(
          "model_content_filtered",
          `the provider stopped the reply with its content filter${reply.text === "" ? "" : ` after: ${short(reply.text)}`}`,
        ),
      };
    }
    if (reply.toolCalls.length === 0) {
      return { ok: true, text: reply.text !== "" ? reply.text : emitted.join("\n\n") };
    }
    conv.pending = [...reply.toolCalls];
  }
}

interface RequestPlan {
  build: () => Omit<ModelRequest, "model" | "signal" | "requireFinishReason">;
  /** Called once when the provider says the request is over the window; true to resend. */
  onOverflow: (() => Promise<boolean>) | null;
}

type SendResult = { ok: true; reply: ModelReply } | { ok: false; failure: ModelFailure };

/** Sends one request, retrying transient failures (`retryDelayMs`, honouring retry-after headers). */
async function requestWithRetries(run: AgentRun, deps: LoopDeps, plan: RequestPlan): Promise<SendResult> {
  let retry = 0;
  let overflowHandled = false;
  while (true) {
    const resolved = resolveModel(run.model, run.env, deps.pool, deps.models);
    if (!resolved.ok) return resolved;
    let f: ModelFailure;
    try {
      const reply = await sendModelRequest({
        ...plan.build(),
        model: resolved.model,
        requireFinishReason: run.model.stream_requires_finish_reason,
        signal: run.signal,
      });
      return { ok: true, reply };
    } catch (error) {
      f =
        error instanceof ModelRequestError
          ? error.failure
          : failure("agent_internal_error", `the model request failed unexpectedly: ${describe(error)}`);
    }
    if (run.signal.aborted || f.class === "agent_aborted") {
      return { ok: false, failure: failure("agent_aborted", abortMessage(run.signal)) };
    }
    if (f.transient && retry < deps.maxRetries) {
      retry += 1;
      const delay = retryDelayMs(retry, f.headers);
      run.activity({
        kind: "request_retry",
        retry,
        delay_ms: delay,
        error_class: f.class,
        message: f.message,
      });
      try {
        await deps.sleep(delay, run.signal);
      } catch {
        // aborted: noticed below
      }
      if (run.signal.aborted)
        return { ok: false, failure: failure("agent_aborted", abortMessage(run.signal)) };
      continue;
    }
    if (f.class === "model_context_overflow") {
      const smaller = f.namedLimit !== null && f.namedLimit < run.model.max_context_tokens;
      if (!smaller && !overflowHandled && plan.onOverflow !== null && run.profile.compaction.enabled) {
        overflowHandled = true;
        if (await plan.onOverflow()) continue;
        if (run.signal.aborted)
          return { ok: false, failure: failure("agent_aborted", abortMessage(run.signal)) };
      }
      return { ok: false, failure: overflowFailure(run, f, smaller, overflowHandled) };
    }
    if (f.transient) {
      const tries =
        retry === 0
          ? ""
          : ` (still failing after ${retry} ${retry === 1 ? "retry" : "retries"} within the attempt)`;
      return { ok: false, failure: { ...f, message: `${f.message}${tries}` } };
    }
    return { ok: false, failure: f };
  }
}

function overflowFailure(run: AgentRun, f: ModelFailure, smaller: boolean, compacted: boolean): ModelFailure {
  const profile = `model profile "${run.model.name}"`;
  let why: string;
  if (smaller) {
    why = `the provider's window (${f.namedLimit} tokens) is smaller than max_context_tokens (${run.model.max_context_tokens}) of ${profile}, so compaction would aim too high; set max_context_tokens: ${f.namedLimit}`;
  } else if (!run.profile.compaction.enabled) {
    why = `compaction is off for agent profile "${run.profile.name}" (reserved_context_pct >= 1)`;
  } else if (compacted) {
    why = "the conversation was compacted and the request was sent once more, and it is still too long";
  } else {
    why = "the conversation could not be compacted";
  }
  return { ...f, message: `${f.message} (${why})` };
}

/** Runs the tool calls still pending, in order; stops (leaving the rest pending) when the attempt aborts. */
async function runPending(run: AgentRun, tools: ReadonlyMap<string, AgentTool>): Promise<void> {
  const conv = run.conversation;
  while (conv.pending.length > 0) {
    if (run.signal.aborted) return;
    const call = conv.pending[0] as PendingCall;
    const outcome = await runToolCall(run, tools, call);
    if (outcome === null) return;
    const output = outcome.ok
      ? { type: "text" as const, value: outcome.output }
      : { type: "error-text" as const, value: outcome.error };
    const part = {
      type: "tool-result" as const,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      output,
    };
    const last = conv.messages.at(-1);
    if (last?.role === "tool")
      conv.messages[conv.messages.length - 1] = { ...last, content: [...last.content, part] };
    else conv.messages.push({ role: "tool", content: [part] });
    run.note({
      role: "tool",
      content: output.value,
      tool_call_id: run.idPrefix + call.toolCallId,
      is_error: !outcome.ok,
    });
    conv.pending.shift();
  }
}

/** One tool call: approval, execution, its activities and record. Null when the attempt aborted during it. */
async function runToolCall(
  run: AgentRun,
  tools: ReadonlyMap<string, AgentTool>,
  call: PendingCall,
): Promise<ToolOutcome | null> {
  const id = run.idPrefix + call.toolCallId;
  const started = Date.now();
  const input = jsonInput(call.input);
  const t = tools.get(call.toolName);
  const record = (status: ToolCallRecord["status"], output: string, approval: string, kind: string) =>
    run.record({
      id,
      name: call.toolName,
      kind,
      input,
      status,
      output,
      approval,
      started_at: started,
      ended_at: Date.now(),
      attempt: run.identity.attempt,
    });
  const activity = (status: "pending" | "completed" | "failed", title: string, result: string | null) =>
    run.activity({
      kind: "tool_call",
      tool_call_id: id,
      title: run.titlePrefix + title,
      tool_kind: t?.activityKind ?? "other",
      status,
      input,
      result,
    });

  if (t === undefined || call.invalid !== null) {
    const error =
      t === undefined
        ? `there is no tool named "${call.toolName}"; the tools are: ${[...tools.keys()].join(", ") || "(none)"}`
        : `the tool call could not be read: ${call.invalid}`;
    activity("failed", call.toolName, error);
    record("failed", error, "not_run", t?.kind ?? "unknown");
    return { ok: false, error };
  }

  const title = safely(() => t.title(call.input), call.toolName);
  const context = { cwd: run.workspace, signal: run.signal, toolCallId: call.toolCallId };
  const target =
    t.target === undefined ? undefined : safely(() => t.target?.(call.input, context), undefined);
  const decision = decideApproval({
    approval: run.approval,
    tool: { kind: t.kind, name: t.name },
    ...(target === undefined ? {} : { target }),
    mode: run.approvalMode,
  });
  activity("pending", title, null);

  let approval: string = decision.reason;
  if (decision.required) {
    let allowed: boolean;
    let by: string;
    if (decision.action === "run") {
      allowed = true;
      by = "bypass";
    } else if (decision.action === "ask" && run.approve !== undefined) {
      const answer = await run
        .approve({
          ...run.identity,
          toolCallId: id,
          tool: { kind: t.kind, name: t.name },
          title: run.titlePrefix + title,
          input: call.input,
          signal: run.signal,
        })
        .catch(() => "reject" as const);
      if (run.signal.aborted) {
        run.activity({
          kind: "permission",
          tool_call_id: id,
          title: run.titlePrefix + title,
          decision: "cancelled",
          by: "callback",
        });
        activity("failed", title, "cancelled");
        record("cancelled", "cancelled while waiting for approval", "cancelled", t.kind);
        return null;
      }
      allowed = answer === "allow";
      by = "callback";
    } else {
      allowed = false;
      by = decision.action === "ask" ? "manual (no approval callback)" : "auto (no approval judge)";
    }
    approval = allowed ? `allowed by ${by}` : `rejected by ${by}`;
    run.activity({
      kind: "permission",
      tool_call_id: id,
      title: run.titlePrefix + title,
      decision: allowed ? "allowed" : "rejected",
      by,
    });
    if (!allowed) {
      const error = `the tool call was not approved (${by}); it did not run. Do not try it again unchanged; continue without it or stop.`;
      activity("failed", title, "rejected");
      record("rejected", error, approval, t.kind);
      return { ok: false, error };
    }
  }

  let outcome: ToolOutcome;
  try {
    outcome = await t.execute(call.input, context);
  } catch (error) {
    outcome = { ok: false, error: `${t.name} failed: ${describe(error)}` };
  }
  if (run.signal.aborted) {
    activity("failed", title, "cancelled");
    record("cancelled", outcome.ok ? outcome.output : outcome.error, approval, t.kind);
    return null;
  }
  const text = outcome.ok ? outcome.output : outcome.error;
  activity(outcome.ok ? "completed" : "failed", title, short(text));
  record(outcome.ok ? "completed" : "failed", text, approval, t.kind);
  return outcome;
}

/**
 * Compacts the conversation: a side request writes the continuation note, and the conversation becomes the
 * task plus the note. False when it could not (the budget is spent, the request failed, the note is empty).
 */
async function compact(
  run: AgentRun,
  deps: LoopDeps,
  side: { used: number },
  toolsChars: number,
): Promise<boolean> {
  const conv = run.conversation;
  const settings = run.profile.compaction;
  const cap = noteOutputCap(settings.last_words_max_output_tokens, run.model);
  const system =
    settings.last_words_template.trim() === ""
      ? NOTE_INSTRUCTIONS
      : `${NOTE_INSTRUCTIONS}\n\n${settings.last_words_template.trim()}`;
  const room = run.model.max_context_tokens - cap - reservedTokens({ ...run.model, max_output_tokens: 0 });
  const text = renderConversation(conv.messages, Math.max(2000, room * 4 - system.length));
  const messages: ModelMessage[] = [{ role: "user", content: `${text}\n\nWrite the continuation note now.` }];
  const estimate = estimateTokens(system, messages, 0);
  const budget = settings.phase4_side_call_token_budget;
  if (budget === 0 || (budget > 0 && side.used + estimate > budget)) {
    run.activity({
      kind: "warning",
      code: "compaction_budget_spent",
      message: `the conversation needs compacting, but phase4_side_call_token_budget (${budget}) of agent profile "${run.profile.name}" leaves no room for the note request (${estimate} estimated tokens, ${side.used} used)`,
    });
    return false;
  }
  side.used += estimate;
  const before = estimateTokens(run.system, conv.messages, toolsChars);
  const sent = await requestWithRetries(run, deps, {
    build: () => ({ system, messages, tools: undefined, maxOutputTokens: cap, stream: false }),
    onOverflow: null,
  });
  if (!sent.ok) {
    if (!run.signal.aborted) {
      run.activity({
        kind: "warning",
        code: "compaction_failed",
        message: `the request for the continuation note failed (${sent.failure.class}): ${sent.failure.message}`,
      });
    }
    return false;
  }
  if (run.usage.add(sent.reply.usage)) run.activity({ kind: "usage", usage: run.usage.total });
  const note = sent.reply.text.trim();
  if (note === "") {
    run.activity({
      kind: "warning",
      code: "compaction_failed",
      message: "the continuation note came back empty",
    });
    return false;
  }
  conv.messages = [continuationMessage(conv.task, note)];
  run.note({ role: "user", content: `${NOTE_HEADER}\n\n${note}` });
  run.activity({
    kind: "compaction",
    tokens_before: before,
    tokens_after: estimateTokens(run.system, conv.messages, toolsChars),
  });
  return true;
}

/** The toolset as the SDK sees it: descriptions and JSON Schemas, no `execute` (the loop runs tools). */
function toSdkTools(list: readonly AgentTool[]): ToolSet | undefined {
  if (list.length === 0) return undefined;
  const out: ToolSet = {};
  for (const t of list) {
    out[t.name] = tool({
      description: t.description,
      inputSchema: jsonSchema(t.inputSchema as Parameters<typeof jsonSchema>[0]),
    });
  }
  return out;
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

function jsonInput(input: unknown): Json {
  try {
    return JSON.parse(JSON.stringify(input ?? null)) as Json;
  } catch {
    return String(input);
  }
}

function safely<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

function short(text: string): string {
  const flat = text.replace(/\s+/gu, " ").trim();
  return flat.length > RESULT_SUMMARY_CHARS ? `${flat.slice(0, RESULT_SUMMARY_CHARS - 1)}…` : flat;
}

export function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  const text = typeof reason === "string" ? reason : reason instanceof Error ? reason.message : "aborted";
  return `the attempt was stopped (${text})`;
}
