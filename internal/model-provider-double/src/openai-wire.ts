import { jsonFragments, textPieces } from "./chunks";
import type { ContentReply, ToolCall } from "./reply";
import {
  type ErrorContext,
  type ErrorReply,
  type HttpAnswer,
  JSON_HEADERS,
  overflowTokens,
  type RenderContext,
  retryHeaders,
  retryHint,
  type WireFormat,
} from "./wire";

/*
 * The OpenAI Chat Completions format, as `@ai-sdk/openai-compatible` 2.0 parses it
 * (`OpenAICompatibleChatResponseSchema`, `chunkBaseSchema`, `openaiCompatibleErrorDataSchema`):
 * `choices[0].message` or `choices[0].delta`, tool-call deltas keyed by `index` whose first fragment
 * carries `id` and `function.name`, a chunk with `finish_reason`, an optional usage chunk, `[DONE]`.
 */

function callId(context: RenderContext, call: ToolCall, index: number): string {
  return call.id ?? `call_${context.seq}_${index}`;
}

function finishReason(reply: ContentReply): string {
  return reply.type === "text" ? "stop" : "tool_calls";
}

function usage(context: RenderContext) {
  const { inputTokens, outputTokens } = context.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
  };
}

function message(reply: ContentReply, context: RenderContext, finished: boolean): string {
  const text = reply.type === "text" ? reply.text : (reply.text ?? null);
  const toolCalls =
    reply.type === "tool_calls"
      ? reply.calls.map((call, index) => ({
          id: callId(context, call, index),
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        }))
      : undefined;
  return JSON.stringify({
    id: `chatcmpl-double-${context.seq}`,
    object: "chat.completion",
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finished ? finishReason(reply) : null,
      },
    ],
    usage: usage(context),
  });
}

function events(reply: ContentReply, context: RenderContext, finished: boolean): string[] {
  const head = {
    id: `chatcmpl-double-${context.seq}`,
    object: "chat.completion.chunk",
    created: context.created,
    model: context.model,
  };
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;

  const frames = [chunk({ role: "assistant", content: "" })];
  const text = reply.type === "text" ? reply.text : (reply.text ?? "");
  for (const piece of textPieces(text)) frames.push(chunk({ content: piece }));
  if (reply.type === "tool_calls") {
    reply.calls.forEach((call, index) => {
      const [first = "", ...rest] = jsonFragments(JSON.stringify(call.arguments));
      frames.push(
        chunk({
          tool_calls: [
            {
              index,
              id: callId(context, call, index),
              type: "function",
              function: { name: call.name, arguments: first },
            },
          ],
        }),
      );
      for (const fragment of rest)
        frames.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    });
  }
  if (finished) {
    frames.push(chunk({}, finishReason(reply)));
    if (context.includeUsage) {
      frames.push(`data: ${JSON.stringify({ ...head, choices: [], usage: usage(context) })}\n\n`);
    }
  }
  frames.push("data: [DONE]\n\n");
  return frames;
}

function redactKey(authorization: string | undefined): string {
  const key = authorization?.replace(/^Bearer\s+/i, "") ?? "";
  if (key.length === 0) return "(none)";
  return key.length <= 8 ? "*".repeat(key.length) : `${key.slice(0, 3)}***${key.slice(-4)}`;
}

type OpenAIError = { status: number; message: string; type: string; code: string | null; param?: string };

function describe(reply: ErrorReply, context: ErrorContext): OpenAIError {
  switch (reply.type) {
    case "rate_limited":
      return {
        status: 429,
        message: reply.message ?? `Rate limit reached for requests.${retryHint(reply)}`,
        type: "requests",
        code: "rate_limit_exceeded",
      };
    case "server_error":
      return {
        status: reply.status ?? 500,
        message: reply.message ?? "The server had an error while processing your request.",
        type: "server_error",
        code: null,
      };
    case "overloaded":
      return {
        status: 503,
        message: reply.message ?? "The engine is currently overloaded, please try again later.",
        type: "server_error",
        code: null,
      };
    case "quota_exhausted":
      return {
        status: 429,
        message:
          reply.message ?? "You exceeded your current quota, please check your plan and billing details.",
        type: "insufficient_quota",
        code: "insufficient_quota",
      };
    case "invalid_key":
      return {
        status: 401,
        message:
          reply.message ?? `Incorrect API key provided: ${redactKey(context.headers["authorization"])}.`,
        type: "invalid_request_error",
        code: "invalid_api_key",
      };
    case "context_overflow":
      return {
        status: 400,
        message:
          `This model's maximum context length is ${reply.limit} tokens. However, your messages resulted in ` +
          `${overflowTokens(reply, context.promptTokens)} tokens. Please reduce the length of the messages.`,
        type: "invalid_request_error",
        code: "context_length_exceeded",
        param: "messages",
      };
    case "http_error":
      return {
        status: reply.status,
        message: reply.message,
        type: reply.errorType ?? (reply.status >= 500 ? "server_error" : "invalid_request_error"),
        code: reply.code ?? null,
      };
  }
}

function error(reply: ErrorReply, context: ErrorContext): HttpAnswer {
  const { status, message, type, code, param } = describe(reply, context);
  return {
    status,
    headers: {
      ...JSON_HEADERS,
      "x-request-id": `req_double_${context.seq}`,
      ...(reply.type === "rate_limited" ? retryHeaders(reply) : {}),
      ...(reply.type === "http_error" ? reply.headers : {}),
    },
    body: JSON.stringify({ error: { message, type, param: param ?? null, code } }),
  };
}

export const openaiWire: WireFormat = { message, events, error };
