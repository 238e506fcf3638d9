import { z } from "zod";
import { contentText, emptyPrompt, type Prompt } from "./prompt";

/*
 * A Messages request as `@ai-sdk/anthropic` 3.0 sends it: `system` (a string or text blocks), `messages`
 * whose content is a string or blocks (`text`, `tool_use` with `input`, `tool_result` with `is_error`),
 * `tools` by `name`, `max_tokens`.
 */

const MessageSchema = z.looseObject({ role: z.string(), content: z.unknown() });

const BlockSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: z.unknown() }),
  z.looseObject({
    type: z.literal("tool_result"),
    tool_use_id: z.string(),
    content: z.unknown().optional(),
    is_error: z.boolean().optional(),
  }),
]);

const ToolSchema = z.looseObject({ name: z.string() });

export function readAnthropicPrompt(body: Readonly<Record<string, unknown>>): Prompt {
  const prompt = emptyPrompt();
  const system = body["system"];
  if (typeof system === "string") prompt.instructions.push(system);
  else if (Array.isArray(system)) {
    for (const block of system) prompt.instructions.push(contentText([block]));
  }
  const messages = Array.isArray(body["messages"]) ? body["messages"] : [];
  for (const entry of messages) {
    const parsed = MessageSchema.safeParse(entry);
    if (!parsed.success || (parsed.data.role !== "user" && parsed.data.role !== "assistant")) continue;
    const role = parsed.data.role;
    const { content } = parsed.data;
    if (!Array.isArray(content)) {
      prompt.items.push({ type: "message", role, text: contentText(content) });
      continue;
    }
    // Consecutive text blocks are one message; tool blocks are items of their own, in the order sent.
    let text: string | null = null;
    const flush = () => {
      if (text !== null) prompt.items.push({ type: "message", role, text });
      text = null;
    };
    for (const part of content) {
      const block = BlockSchema.safeParse(part);
      if (!block.success) continue;
      if (block.data.type === "text") {
        text = (text ?? "") + block.data.text;
        continue;
      }
      flush();
      if (block.data.type === "tool_use") {
        prompt.items.push({
          type: "tool_call",
          id: block.data.id,
          name: block.data.name,
          arguments: block.data.input,
        });
      } else {
        prompt.items.push({
          type: "tool_result",
          toolCallId: block.data.tool_use_id,
          content: contentText(block.data.content),
          isError: block.data.is_error === true,
        });
      }
    }
    flush();
  }
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  prompt.tools = tools.flatMap((tool) => {
    const parsed = ToolSchema.safeParse(tool);
    return parsed.success ? [parsed.data.name] : [];
  });
  prompt.maxOutputTokens = typeof body["max_tokens"] === "number" ? body["max_tokens"] : null;
  return prompt;
}
