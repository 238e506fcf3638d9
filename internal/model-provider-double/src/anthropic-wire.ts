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
 * The Anthropic Messages format, as `@ai-sdk/anthropic` 3.0 parses it (`anthropicMessagesResponseSchema`,
 * `anthropicMessagesChunkSchema`, `anthropicErrorDataSchema`): named SSE events `message_start`,
 * `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) / `content_block_stop`
 * per block, `message_delta` with `stop_reason` and usage, `message_stop`.
 */

function toolUseId(context: RenderContext, call: ToolCall, index: number): string {
  return call.id ?? `toolu_${context.seq}_${index}`;
}

function stopReason(reply: ContentReply): string {
  return reply.type === "text" ? "end_turn" : "tool_use";
}

/** The reply's content blocks: its text (when any, or when it is only text), then one `tool_use` per call. */
function blocks(reply: ContentReply, context: RenderContext) {
  const textBlocks = reply.text === undefined ? [] : [{ type: "text" as const, text: reply.text }];
  const toolBlocks =
    reply.type === "tool_calls"
      ? reply.calls.map((call, index) => ({
          type: "tool_use" as const,
          id: toolUseId(context, call, index),
          name: call.name,
          input: call.arguments,
        }))
      : [];
  return [...textBlocks, ...toolBlocks];
}

function message(reply: ContentReply, context: RenderContext, finished: boolean): string {
  return JSON.stringify({
    id: `msg_double_${context.seq}`,
    type: "message",
    role: "assistant",
    model: context.model,
    content: blocks(reply, context),
    stop_reason: finished ? stopReason(reply) : null,
    stop_sequence: null,
    usage: { input_tokens: context.usage.inputTokens, output_tokens: context.usage.outputTokens },
  });
}

function event(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function events(reply: ContentReply, context: RenderContext, finished: boolean): string[] {
  const frames = [
    event("message_start", {
      message: {
        id: `msg_double_${context.seq}`,
        type: "message",
        role: "assistant",
        model: context.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: context.usage.inputTokens, output_tokens: 0 },
      },
    }),
  ];
  blocks(reply, context).forEach((block, index) => {
    if (block.type === "text") {
      frames.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const text of textPieces(block.text)) {
        frames.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }));
      }
    } else {
      frames.push(
        event("content_block_start", {
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        }),
      );
      for (const partial_json of jsonFragments(JSON.stringify(block.input))) {
        frames.push(
          event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }),
        );
      }
    }
    frames.push(event("content_block_stop", { index }));
  });
  if (finished) {
    frames.push(
      event("message_delta", {
        delta: { stop_reason: stopReason(reply), stop_sequence: null },
        usage: { output_tokens: context.usage.outputTokens },
      }),
      event("message_stop", {}),
    );
  }
  return frames;
}

/** Anthropic's error type for a status, from its errors page; other 4xx are `invalid_request_error`. */
function typeForStatus(status: number): string {
  const types: Record<number, string> = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
  };
  return types[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

type AnthropicError = { status: number; type: string; message: string };

function quota(reply: Extract<ErrorReply, { type: "quota_exhausted" }>): AnthropicError {
  switch (reply.anthropicShape ?? "credit_balance") {
    case "credit_balance":
      return {
        status: 400,
        type: "invalid_request_error",
        message:
          reply.message ??
          "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
      };
    case "billing_error":
      return {
        status: 402,
        type: "billing_error",
        message: reply.message ?? "There is a problem with your billing or payment information.",
      };
    case "permission_error":
      return {
        status: 403,
        type: "permission_error",
        message: reply.message ?? "Your API key does not have permission to use the specified resource.",
      };
  }
}

function describe(reply: ErrorReply, context: ErrorContext): AnthropicError {
  switch (reply.type) {
    case "rate_limited":
      return {
        status: 429,
        type: "rate_limit_error",
        message: reply.message ?? `This request would exceed your rate limit.${retryHint(reply)}`,
      };
    case "server_error":
      return {
        status: reply.status ?? 500,
        type: "api_error",
        message: reply.message ?? "Internal server error",
      };
    case "overloaded":
      return { status: 529, type: "overloaded_error", message: reply.message ?? "Overloaded" };
    case "quota_exhausted":
      return quota(reply);
    case "invalid_key":
      return { status: 401, type: "authentication_error", message: reply.message ?? "invalid x-api-key" };
    case "context_overflow":
      return {
        status: 400,
        type: "invalid_request_error",
        message: `prompt is too long: ${overflowTokens(reply, context.promptTokens)} tokens > ${reply.limit} maximum`,
      };
    case "http_error":
      return {
        status: reply.status,
        type: reply.errorType ?? typeForStatus(reply.status),
        message: reply.message,
      };
  }
}

function error(reply: ErrorReply, context: ErrorContext): HttpAnswer {
  const { status, type, message } = describe(reply, context);
  const requestId = `req_double_${context.seq}`;
  return {
    status,
    headers: {
      ...JSON_HEADERS,
      "request-id": requestId,
      ...(reply.type === "rate_limited" ? retryHeaders(reply) : {}),
      ...(reply.type === "http_error" ? reply.headers : {}),
    },
    body: JSON.stringify({ type: "error", error: { type, message }, request_id: requestId }),
  };
}

export const anthropicWire: WireFormat = { message, events, error };
