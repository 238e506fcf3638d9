import { z } from "zod";
import type { Wire } from "./parsed-request";

/** A parsed or a recorded request: the prompt readers need only its wire format and body. */
type Readable = { wire: Wire | null; body: unknown };

const TextPartSchema = z.looseObject({ type: z.literal("text"), text: z.string() });

/** What a message's content may be in both formats: a string, or parts of which only text is read here. */
const ContentSchema = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);

const MessagesBodySchema = z.looseObject({
  messages: z.array(z.looseObject({ role: z.string(), content: ContentSchema.nullish() })),
});

const OpenAIToolMessageSchema = z.looseObject({
  role: z.literal("tool"),
  tool_call_id: z.string(),
  content: ContentSchema,
});

const AnthropicToolResultSchema = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: ContentSchema.optional(),
  is_error: z.boolean().optional(),
});

function textOf(content: z.infer<typeof ContentSchema> | null | undefined): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content
    .map((part) => TextPartSchema.safeParse(part))
    .flatMap((parsed) => (parsed.success ? [parsed.data.text] : []))
    .join("");
}

function messagesOf(request: Readable): z.infer<typeof MessagesBodySchema>["messages"] {
  const parsed = MessagesBodySchema.safeParse(request.body);
  return parsed.success ? parsed.data.messages : [];
}

/** The text of the last user message (both formats), or null when there is none; for echoing the prompt. */
export function lastUserText(request: Readable): string | null {
  const user = messagesOf(request).findLast((message) => message.role === "user");
  return user === undefined ? null : textOf(user.content);
}

/** A tool result the client sent back, in either format (`isError` is Anthropic's `is_error`). */
export const ToolResultSchema = z.object({
  toolCallId: z.string(),
  content: z.string(),
  isError: z.boolean(),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;

/**
 * Every tool result in the request's conversation, in order: OpenAI `role: "tool"` messages, Anthropic
 * `tool_result` blocks of user messages. None for a request to a path the double does not serve.
 */
export function toolResults(request: Readable): ToolResult[] {
  const results: ToolResult[] = [];
  if (request.wire === null) return results;
  for (const message of messagesOf(request)) {
    if (request.wire === "openai") {
      const tool = OpenAIToolMessageSchema.safeParse(message);
      if (tool.success) {
        results.push({
          toolCallId: tool.data.tool_call_id,
          content: textOf(tool.data.content),
          isError: false,
        });
      }
      continue;
    }
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      const block = AnthropicToolResultSchema.safeParse(part);
      if (block.success) {
        results.push({
          toolCallId: block.data.tool_use_id,
          content: textOf(block.data.content),
          isError: block.data.is_error === true,
        });
      }
    }
  }
  return results;
}
