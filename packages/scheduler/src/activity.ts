import { z } from "zod";

/**
 * What an agent reports while an attempt runs, as `agent_activity` events: the text it writes as it writes it,
 * its tool calls and their results, its plan, the permission requests it makes and how they were decided, the
 * tokens it used, and the within-attempt retries and compactions of its model requests. Native agents and ACP
 * agents report through the same union, so a front end renders one shape whatever the runtime.
 */

/** How far a tool call has got (ACP's `ToolCallStatus`). */
const ToolCallStatusSchema = z.enum(["pending", "in_progress", "completed", "failed"]);

/** What kind of tool it is (ACP's `ToolKind`, plus `mcp` and `sub_agent` for the native loop's own). */
const ToolKindSchema = z.enum([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "switch_mode",
  "mcp",
  "sub_agent",
  "other",
]);

const PlanEntrySchema = z.object({
  content: z.string(),
  status: z.enum(["pending", "in_progress", "completed"]),
  priority: z.enum(["high", "medium", "low"]),
});

/** Tokens used by the attempt so far (cumulative: the last `usage` of an attempt is its total). */
export const TokenUsageSchema = z.object({
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
  /** Input tokens served from the provider's cache, when it says. */
  cached_input_tokens: z.number().int().min(0).nullable(),
  /** Output tokens spent on reasoning, when the provider says. */
  reasoning_tokens: z.number().int().min(0).nullable(),
  /** Cost as the agent reports it (ACP `usage_update`), or `null`. */
  cost: z.object({ amount: z.number(), currency: z.string() }).nullable(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

export const AgentActivitySchema = z.discriminatedUnion("kind", [
  /** A piece of the agent's reply text, as it streams (the CLI shows the notes between tool calls). */
  z.object({ kind: z.literal("text"), text: z.string() }),
  /** A piece of the agent's reasoning, when the runtime shows it. */
  z.object({ kind: z.literal("thought"), text: z.string() }),
  /** A tool call started or changed: `result` is a summary of its output once it has one. */
  z.object({
    kind: z.literal("tool_call"),
    tool_call_id: z.string(),
    title: z.string(),
    tool_kind: ToolKindSchema,
    status: ToolCallStatusSchema,
    input: z.json().nullable(),
    result: z.string().nullable(),
  }),
  z.object({ kind: z.literal("plan"), entries: z.array(PlanEntrySchema) }),
  /** A tool call that needed approval, and how it was decided (`by`: the approval mode or rule that did). */
  z.object({
    kind: z.literal("permission"),
    tool_call_id: z.string(),
    title: z.string(),
    decision: z.enum(["allowed", "rejected", "cancelled"]),
    by: z.string(),
  }),
  z.object({ kind: z.literal("usage"), usage: TokenUsageSchema }),
  /** A model request failed with a transient error and is sent again after `delay_ms` (within the attempt). */
  z.object({
    kind: z.literal("request_retry"),
    retry: z.number().int().min(1),
    delay_ms: z.number().min(0),
    error_class: z.string(),
    message: z.string(),
  }),
  /** The conversation was compacted to fit the context window. */
  z.object({
    kind: z.literal("compaction"),
    tokens_before: z.number().int().min(0),
    tokens_after: z.number().int().min(0),
  }),
  /** Something the user should know that does not fail the attempt (a model switch refused, …). */
  z.object({ kind: z.literal("warning"), code: z.string(), message: z.string() }),
]);
export type AgentActivity = z.infer<typeof AgentActivitySchema>;
