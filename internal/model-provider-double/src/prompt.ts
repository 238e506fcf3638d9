import { z } from "zod";

/**
 * One entry of the conversation a request carried, the same for every wire format: a user or assistant
 * message (its text parts joined), a tool call the assistant made, or a tool result the client sent back.
 */
export const PromptItemSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message"), role: z.enum(["user", "assistant"]), text: z.string() }),
  z.object({
    type: z.literal("tool_call"),
    /** The call's id: OpenAI `tool_calls[].id`, Anthropic `tool_use.id`, Responses `call_id`. */
    id: z.string(),
    name: z.string(),
    /** The arguments parsed from their JSON text (Anthropic's `input` as sent), or the text when it is not JSON. */
    arguments: z.unknown(),
  }),
  z.object({
    type: z.literal("tool_result"),
    toolCallId: z.string(),
    content: z.string(),
    /** Anthropic's `is_error`; the OpenAI formats have no such flag. */
    isError: z.boolean(),
  }),
]);
export type PromptItem = z.infer<typeof PromptItemSchema>;

/**
 * What a request asked the model, read from its body in the wire format's own terms, so that a test can
 * assert on what was sent whatever the wire. Parts a model would not read as text (images, reasoning items)
 * are left out here; they stay in the request's `body`.
 */
export const PromptSchema = z.object({
  /**
   * The instructions, each as sent: OpenAI `system`/`developer` messages; Anthropic `system` (a string, or
   * each text block); Responses `instructions`, then `system`/`developer` input messages.
   */
  instructions: z.array(z.string()),
  items: z.array(PromptItemSchema),
  /** The names of the tools offered (a Responses tool that is not a function shows as its `type`). */
  tools: z.array(z.string()),
  /** `max_tokens` / `max_completion_tokens` (OpenAI), `max_tokens` (Anthropic), `max_output_tokens` (Responses). */
  maxOutputTokens: z.number().nullable(),
});
export type Prompt = z.infer<typeof PromptSchema>;

/** The prompt of a request the double could not read (an unknown path, a body that is not a JSON object). */
export function emptyPrompt(): Prompt {
  return { instructions: [], items: [], tools: [], maxOutputTokens: null };
}

/** Text part types of the three formats: `text` (Chat Completions, Anthropic), `input_text`/`output_text` (Responses). */
const TEXT_PART_TYPES: ReadonlySet<string> = new Set(["text", "input_text", "output_text"]);

/** The text of a message's content: a string, or its text parts joined (other parts are skipped). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => {
      if (typeof part !== "object" || part === null) return "";
      const { type, text } = part as { type?: unknown; text?: unknown };
      return typeof type === "string" && TEXT_PART_TYPES.has(type) && typeof text === "string" ? text : "";
    })
    .join("");
}

/** Tool-call arguments as sent in a JSON string: parsed, or the string itself when it is not JSON. */
export function parseArguments(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** A parsed or a recorded request: the prompt readers need only its prompt. */
type Readable = { prompt: Prompt };

/** The text of the last user message, or null when there is none; for echoing the prompt. */
export function lastUserText(request: Readable): string | null {
  const user = request.prompt.items.findLast((item) => item.type === "message" && item.role === "user");
  return user?.type === "message" ? user.text : null;
}

/** A tool result the client sent back, in any format (`isError` is Anthropic's `is_error`). */
export const ToolResultSchema = z.object({
  toolCallId: z.string(),
  content: z.string(),
  isError: z.boolean(),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;

/**
 * Every tool result in the request's conversation, in order: OpenAI `role: "tool"` messages, Anthropic
 * `tool_result` blocks, Responses `function_call_output` items. None for a request the double could not read.
 */
export function toolResults(request: Readable): ToolResult[] {
  return request.prompt.items.flatMap((item) =>
    item.type === "tool_result"
      ? [{ toolCallId: item.toolCallId, content: item.content, isError: item.isError }]
      : [],
  );
}
