import { jsonFragments, textPieces } from "./chunks";
import { openaiWire } from "./openai-wire";
import type { ContentReply, ToolCall } from "./reply";
import {
  type ErrorContext,
  type ErrorReply,
  type HttpAnswer,
  JSON_HEADERS,
  type RenderContext,
  type WireFormat,
} from "./wire";

/*
 * The OpenAI Responses format, as `@ai-sdk/openai` 3.0 parses it (`openaiResponsesResponseSchema`,
 * `openaiResponsesChunkSchema`, `openaiErrorDataSchema`): a response object whose `output` holds a
 * `message` item (`output_text` content) and `function_call` items (`call_id`, JSON-string `arguments`),
 * with `usage` in input/output tokens and their details. A stream is named SSE events, each with a
 * `sequence_number` and no `[DONE]`: `response.created`, `response.in_progress`, per item
 * `response.output_item.added` … `response.output_item.done` (text through `response.content_part.*` and
 * `response.output_text.delta/done`, arguments through `response.function_call_arguments.delta/done`), and
 * `response.completed` with the whole response and its usage. Error bodies are Chat Completions'.
 */

type MessageItem = {
  type: "message";
  id: string;
  status: "completed";
  role: "assistant";
  content: Array<{ type: "output_text"; text: string; annotations: []; logprobs: [] }>;
};
type FunctionCallItem = {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "completed";
};
export type ResponsesOutputItem = MessageItem | FunctionCallItem;

function callId(context: RenderContext, call: ToolCall, index: number): string {
  return call.id ?? `call_${context.seq}_${index}`;
}

/** The reply's output items, complete: its text as one message (when any, or when it is only text), then its calls. */
export function outputItems(reply: ContentReply, context: RenderContext): ResponsesOutputItem[] {
  const items: ResponsesOutputItem[] = [];
  if (reply.text !== undefined) {
    items.push({
      type: "message",
      id: `msg_double_${context.seq}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [], logprobs: [] }],
    });
  }
  if (reply.type === "tool_calls") {
    reply.calls.forEach((call, index) => {
      items.push({
        type: "function_call",
        id: `fc_double_${context.seq}_${index}`,
        call_id: callId(context, call, index),
        name: call.name,
        arguments: JSON.stringify(call.arguments),
        status: "completed",
      });
    });
  }
  return items;
}

function usage(context: RenderContext) {
  const { inputTokens, outputTokens } = context.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

/** The response object; unfinished, it is still `in_progress`, as a response is before `response.completed`. */
function response(context: RenderContext, output: ResponsesOutputItem[], finished: boolean) {
  return {
    id: `resp_double_${context.seq}`,
    object: "response",
    created_at: context.created,
    status: finished ? "completed" : "in_progress",
    error: null,
    incomplete_details: null,
    model: context.model,
    output,
    usage: finished ? usage(context) : null,
  };
}

function message(reply: ContentReply, context: RenderContext, finished: boolean): string {
  return JSON.stringify(response(context, outputItems(reply, context), finished));
}

function events(reply: ContentReply, context: RenderContext, finished: boolean): string[] {
  const items = outputItems(reply, context);
  const started = response(context, [], false);
  const list: Array<Record<string, unknown>> = [
    { type: "response.created", response: started },
    { type: "response.in_progress", response: started },
  ];
  items.forEach((item, output_index) => {
    if (item.type === "message") {
      const text = item.content[0]?.text ?? "";
      const part = (value: string) => ({ type: "output_text", text: value, annotations: [], logprobs: [] });
      const at = { item_id: item.id, output_index, content_index: 0 };
      list.push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", content: [] },
      });
      list.push({ type: "response.content_part.added", ...at, part: part("") });
      for (const delta of textPieces(text))
        list.push({ type: "response.output_text.delta", ...at, delta, logprobs: [] });
      list.push({ type: "response.output_text.done", ...at, text, logprobs: [] });
      list.push({ type: "response.content_part.done", ...at, part: part(text) });
    } else {
      const at = { item_id: item.id, output_index };
      list.push({
        type: "response.output_item.added",
        output_index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of jsonFragments(item.arguments))
        list.push({ type: "response.function_call_arguments.delta", ...at, delta });
      list.push({ type: "response.function_call_arguments.done", ...at, arguments: item.arguments });
    }
    list.push({ type: "response.output_item.done", output_index, item });
  });
  if (finished) list.push({ type: "response.completed", response: response(context, items, true) });
  return list.map(
    (event, sequence_number) =>
      `event: ${String(event["type"])}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`,
  );
}

/**
 * Chat Completions' error bodies, but for a context overflow: the Responses API says it in its own words,
 * which name no limit (so `limit` and `tokens` do not show on this wire).
 */
function error(reply: ErrorReply, context: ErrorContext): HttpAnswer {
  if (reply.type !== "context_overflow") return openaiWire.error(reply, context);
  return {
    status: 400,
    headers: { ...JSON_HEADERS, "x-request-id": `req_double_${context.seq}` },
    body: JSON.stringify({
      error: {
        message:
          "Your input exceeds the context window of this model. Please adjust your input and try again.",
        type: "invalid_request_error",
        param: "input",
        code: "context_length_exceeded",
      },
    }),
  };
}

export const responsesWire: WireFormat = { message, events, error };
