import { z } from "zod";
import { contentText, emptyPrompt, type Prompt, parseArguments } from "./prompt";

/*
 * A Chat Completions request as `@ai-sdk/openai-compatible` 2.0 sends it: `messages` with `system` /
 * `developer`, `user`, `assistant` (text and `tool_calls` with JSON-string arguments) and `tool` messages,
 * `tools` of type function, `max_tokens` (or OpenAI's newer `max_completion_tokens`).
 */

const ToolCallSchema = z.looseObject({
  id: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const MessageSchema = z.looseObject({
  role: z.string(),
  content: z.unknown().optional(),
  tool_calls: z.array(z.unknown()).nullish(),
  tool_call_id: z.string().optional(),
});

const ToolSchema = z.looseObject({ function: z.looseObject({ name: z.string() }) });

export function readOpenAIPrompt(body: Readonly<Record<string, unknown>>): Prompt {
  const prompt = emptyPrompt();
  const messages = Array.isArray(body["messages"]) ? body["messages"] : [];
  for (const entry of messages) {
    const parsed = MessageSchema.safeParse(entry);
    if (!parsed.success) continue;
    const { role, content, tool_calls, tool_call_id } = parsed.data;
    if (role === "system" || role === "developer") prompt.instructions.push(contentText(content));
    else if (role === "user")
      prompt.items.push({ type: "message", role: "user", text: contentText(content) });
    else if (role === "tool" && tool_call_id !== undefined) {
      prompt.items.push({
        type: "tool_result",
        toolCallId: tool_call_id,
        content: contentText(content),
        isError: false,
      });
    } else if (role === "assistant") {
      const text = contentText(content);
      if (text !== "" || !tool_calls?.length) prompt.items.push({ type: "message", role: "assistant", text });
      for (const call of tool_calls ?? []) {
        const tool = ToolCallSchema.safeParse(call);
        if (!tool.success) continue;
        prompt.items.push({
          type: "tool_call",
          id: tool.data.id,
          name: tool.data.function.name,
          arguments: parseArguments(tool.data.function.arguments),
        });
      }
    }
  }
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  prompt.tools = tools.flatMap((tool) => {
    const parsed = ToolSchema.safeParse(tool);
    return parsed.success ? [parsed.data.function.name] : [];
  });
  const max = body["max_completion_tokens"] ?? body["max_tokens"];
  prompt.maxOutputTokens = typeof max === "number" ? max : null;
  return prompt;
}
