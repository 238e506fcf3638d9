import type {
  ContentBlock,
  SessionUpdate,
  ToolCallContent,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk/unstable";
import type { AgentActivity, TokenUsage } from "@icode/workflow-scheduler";
import type { z } from "zod";
import type { AgentTranscript } from "../transcript";
import type { UsageSchema } from "./wire";

type JsonValue = z.infer<ReturnType<typeof z.json>>;
type TranscriptMessage = AgentTranscript["messages"][number];
type ToolCallRecord = AgentTranscript["tool_calls"][number];
type ActivityToolKind = Extract<AgentActivity, { kind: "tool_call" }>["tool_kind"];
type ToolStatus = Extract<AgentActivity, { kind: "tool_call" }>["status"];
type PlanEntry = Extract<AgentActivity, { kind: "plan" }>["entries"][number];

/** ACP's tool kinds, which the activity union shares; anything else is reported as `other`. */
const ACP_TOOL_KINDS: ReadonlySet<string> = new Set([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "switch_mode",
  "other",
]);
const PLAN_STATUSES: ReadonlySet<string> = new Set(["pending", "in_progress", "completed"]);
const PLAN_PRIORITIES: ReadonlySet<string> = new Set(["high", "medium", "low"]);

/** What an ACP node returns (agent-profiles.md 2.8, `result_mode`). */
export type ResultMode = "last_segment" | "transcript";

/** Longest tool result an activity carries; the transcript keeps up to `TRANSCRIPT_OUTPUT_CHARS`. */
const ACTIVITY_RESULT_CHARS = 2000;
const TRANSCRIPT_OUTPUT_CHARS = 64 * 1024;

interface ToolCallState {
  id: string;
  title: string;
  name: string | null;
  kind: string;
  status: ToolStatus;
  input: JsonValue | null;
  /** Text of its `content`, and its `rawOutput` as JSON: the output is the first that is not empty. */
  text: string;
  raw: string;
  startedAt: number;
  endedAt: number | null;
  /** How its permission request was decided (`by`), or null when the agent asked none. */
  approval: string | null;
  rejected: boolean;
  /** The transcript already has its `tool` message. */
  answered: boolean;
  /** Its assistant message in the transcript, kept current as updates arrive. */
  message: TranscriptMessage;
}

function outputOf(call: ToolCallState): string {
  return call.text !== "" ? call.text : call.raw;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

function json(value: unknown): JsonValue | null {
  return value === undefined ? null : (value as JsonValue);
}

function blockText(block: ContentBlock): string | null {
  if (block.type === "text") return block.text;
  if (block.type === "resource_link") return block.uri;
  if (block.type === "resource") return "text" in block.resource ? block.resource.text : block.resource.uri;
  return null;
}

function contentText(content: readonly ToolCallContent[] | null | undefined): string {
  if (!content) return "";
  return content
    .map((c) => {
      if (c.type === "content") return blockText(c.content) ?? `[${c.content.type}]`;
      if (c.type === "diff") return `[diff of ${c.path}]\n${c.newText}`;
      return `[terminal ${c.terminalId}]`;
    })
    .join("\n");
}

function addTokens(
  a: Omit<TokenUsage, "cost"> | null,
  b: Omit<TokenUsage, "cost">,
): Omit<TokenUsage, "cost"> {
  if (a === null) return b;
  const opt = (x: number | null, y: number | null) => (x === null && y === null ? null : (x ?? 0) + (y ?? 0));
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    cached_input_tokens: opt(a.cached_input_tokens, b.cached_input_tokens),
    reasoning_tokens: opt(a.reasoning_tokens, b.reasoning_tokens),
  };
}

function activityKind(kind: string): ActivityToolKind {
  return ACP_TOOL_KINDS.has(kind) ? (kind as ActivityToolKind) : "other";
}

function planEntry(entry: { content: string; status: string; priority: string }): PlanEntry {
  return {
    content: entry.content,
    status: PLAN_STATUSES.has(entry.status) ? (entry.status as PlanEntry["status"]) : "pending",
    priority: PLAN_PRIORITIES.has(entry.priority) ? (entry.priority as PlanEntry["priority"]) : "medium",
  };
}

/**
 * Follows one ACP prompt turn: turns each `session/update` into the `agent_activity` it stands for (message
 * chunks → `text`, thoughts, tool calls with their merged state, plans, usage), and keeps what the node
 * returns and what its transcript records. A **segment** is a maximal run of consecutive agent message
 * chunks; a thought, a plan, a tool call or its update ends it (ours: updates that carry no conversation —
 * usage, commands, modes, options, session info — do not).
 */
export class TurnRecorder {
  private readonly segments: string[] = [];
  private current: string[] | null = null;
  private readonly messages: TranscriptMessage[] = [];
  private readonly calls = new Map<string, ToolCallState>();
  private readonly fileRequests: ToolCallRecord[] = [];
  private tokens: Omit<TokenUsage, "cost"> | null = null;
  private contextUsed = 0;
  private cost: TokenUsage["cost"] = null;
  private usageSeen = false;
  /** Where the current turn's segments start (a session may run several turns through one recorder). */
  private turnStart = 0;
  /** Final token counts of the turns before the current one, summed. */
  private carried: Omit<TokenUsage, "cost"> | null = null;

  constructor(
    private readonly options: {
      readonly attempt: number;
      readonly now: () => number;
      readonly emit: (activity: AgentActivity) => void;
    },
  ) {}

  /** The prompt the engine sent. */
  prompt(text: string): void {
    // A new turn: its result is its own segments; the turns before keep their tokens in the sum.
    this.endSegment();
    this.turnStart = this.segments.length;
    if (this.tokens !== null) {
      this.carried = addTokens(this.carried, this.tokens);
      this.tokens = null;
    }
    this.messages.push({ role: "user", content: text, attempt: this.options.attempt });
  }

  update(update: SessionUpdate): void {
    switch (update.sessionUpdate) {
      case "agent_message_chunk": {
        const text = blockText(update.content);
        if (text === null || text === "") return;
        if (this.current === null) this.current = [];
        this.current.push(text);
        this.options.emit({ kind: "text", text });
        return;
      }
      case "agent_thought_chunk": {
        this.endSegment();
        const text = blockText(update.content);
        if (text !== null && text !== "") this.options.emit({ kind: "thought", text });
        return;
      }
      case "tool_call":
      case "tool_call_update":
        this.toolCall(update);
        return;
      case "plan": {
        this.endSegment();
        const entries = update.entries.map(planEntry);
        this.options.emit({ kind: "plan", entries });
        return;
      }
      case "usage_update": {
        this.usageSeen = true;
        this.contextUsed = Math.max(this.contextUsed, update.used);
        if (update.cost) this.cost = { amount: update.cost.amount, currency: update.cost.currency };
        this.options.emit({ kind: "usage", usage: this.usage()! });
        return;
      }
      default:
        return;
    }
  }

  /**
   * A tool call the permission request names: its details are merged like a `tool_call_update` (a call
   * not seen before is started).
   */
  permissionRequested(toolCall: ToolCallUpdate): void {
    this.toolCall(toolCall);
  }

  /** How a permission request was decided; `by` is the mode or rule that decided it. */
  permission(
    toolCallId: string,
    title: string,
    decision: "allowed" | "rejected" | "cancelled",
    by: string,
  ): void {
    const call = this.calls.get(toolCallId);
    if (call) {
      call.approval = decision === "allowed" ? by : `${decision} (${by})`;
      call.rejected = decision !== "allowed";
    }
    this.options.emit({ kind: "permission", tool_call_id: toolCallId, title, decision, by });
  }

  /** A file request the engine served (`fs/read_text_file`, `fs/write_text_file`), for the transcript. */
  fileRequest(record: {
    method: string;
    kind: "read" | "edit";
    input: JsonValue;
    ok: boolean;
    output: string;
    startedAt: number;
  }): void {
    this.fileRequests.push({
      id: `fs_${this.fileRequests.length + 1}`,
      name: record.method,
      kind: record.kind,
      input: record.input,
      status: record.ok ? "completed" : "failed",
      output: clip(record.output, TRANSCRIPT_OUTPUT_CHARS),
      approval: "not_required",
      started_at: record.startedAt,
      ended_at: this.options.now(),
      attempt: this.options.attempt,
    });
  }

  /** The token usage of the turn's `PromptResponse`, which replaces the counts seen so far. */
  finalUsage(usage: z.infer<typeof UsageSchema>): void {
    this.usageSeen = true;
    this.tokens = {
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      total_tokens: usage.totalTokens,
      cached_input_tokens: usage.cachedReadTokens ?? null,
      reasoning_tokens: usage.thoughtTokens ?? null,
    };
    this.options.emit({ kind: "usage", usage: this.usage()! });
  }

  /**
   * Usage so far, or null when the agent reported none. Before the turn's final usage, ACP says only how
   * many tokens are in context (`usage_update.used`): that is `total_tokens` (never decreasing), with input
   * and output at 0 until the `PromptResponse` splits them.
   */
  usage(): TokenUsage | null {
    if (!this.usageSeen) return null;
    const current =
      this.tokens ??
      (this.carried !== null
        ? null
        : {
            input_tokens: 0,
            output_tokens: 0,
            total_tokens: this.contextUsed,
            cached_input_tokens: null,
            reasoning_tokens: null,
          });
    const tokens = current === null ? this.carried! : addTokens(this.carried, current);
    return { ...tokens, cost: this.cost };
  }

  /** The current turn's output by `mode`: its final segment, or its segments joined by one blank line. */
  result(mode: ResultMode): string {
    const all = this.allSegments().slice(this.turnStart);
    return mode === "last_segment" ? (all.at(-1) ?? "") : all.join("\n\n");
  }

  /** The transcript's messages, tool calls and usage; calls still running end as `cancelled` (or `rejected`). */
  transcript(): Pick<AgentTranscript, "messages" | "tool_calls" | "usage"> {
    this.endSegment();
    const end = this.options.now();
    const tool_calls: ToolCallRecord[] = [...this.calls.values()].map((c) => ({
      id: c.id,
      name: c.name ?? c.title,
      kind: c.kind,
      input: c.input,
      status:
        c.status === "completed"
          ? "completed"
          : c.rejected
            ? "rejected"
            : c.status === "failed"
              ? "failed"
              : "cancelled",
      output: clip(outputOf(c), TRANSCRIPT_OUTPUT_CHARS),
      approval: c.approval ?? "not_requested",
      started_at: c.startedAt,
      ended_at: c.endedAt ?? end,
      attempt: this.options.attempt,
    }));
    tool_calls.push(...this.fileRequests);
    return { messages: [...this.messages], tool_calls, usage: this.usage() };
  }

  private allSegments(): string[] {
    return this.current === null ? [...this.segments] : [...this.segments, this.current.join("")];
  }

  private endSegment(): void {
    if (this.current === null) return;
    const text = this.current.join("");
    this.segments.push(text);
    this.messages.push({ role: "assistant", content: text, attempt: this.options.attempt });
    this.current = null;
  }

  private toolCall(update: ToolCallUpdate & { title?: string | null }): void {
    this.endSegment();
    const now = this.options.now();
    let call = this.calls.get(update.toolCallId);
    if (!call) {
      const message: TranscriptMessage = {
        role: "assistant",
        content: "",
        tool_calls: [{ id: update.toolCallId, name: update.toolCallId, input: null }],
        attempt: this.options.attempt,
      };
      call = {
        id: update.toolCallId,
        title: update.toolCallId,
        name: null,
        kind: "other",
        status: "pending",
        input: null,
        text: "",
        raw: "",
        startedAt: now,
        endedAt: null,
        approval: null,
        rejected: false,
        answered: false,
        message,
      };
      this.calls.set(call.id, call);
      this.messages.push(message);
    }
    if (update.title != null) call.title = update.title;
    const name = (update as { name?: unknown }).name;
    if (typeof name === "string" && name !== "") call.name = name;
    if (update.kind != null) call.kind = update.kind;
    if (update.status != null) call.status = update.status;
    if (update.rawInput !== undefined) call.input = json(update.rawInput);
    if (update.content != null) call.text = contentText(update.content);
    if (update.rawOutput !== undefined) call.raw = JSON.stringify(update.rawOutput) ?? "";
    call.message.tool_calls = [{ id: call.id, name: call.name ?? call.title, input: call.input }];
    const output = outputOf(call);
    const finished = call.status === "completed" || call.status === "failed";
    if (finished && call.endedAt === null) call.endedAt = now;
    if (finished && !call.answered) {
      call.answered = true;
      this.messages.push({
        role: "tool",
        content: clip(output, TRANSCRIPT_OUTPUT_CHARS),
        tool_call_id: call.id,
        is_error: call.status === "failed",
        attempt: this.options.attempt,
      });
    }
    this.options.emit({
      kind: "tool_call",
      tool_call_id: call.id,
      title: call.title,
      tool_kind: activityKind(call.kind),
      status: call.status,
      input: call.input,
      result: output === "" ? null : clip(output, ACTIVITY_RESULT_CHARS),
    });
  }
}
