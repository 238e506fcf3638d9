import type {
  ContentReply,
  ContextOverflowReply,
  DataReply,
  DropMidStreamReply,
  EndWithoutFinishReply,
  FunctionReply,
  HangReply,
  HttpErrorReply,
  InvalidKeyReply,
  OverloadedReply,
  QuotaExhaustedReply,
  RateLimitedReply,
  Reply,
  ReplyFunction,
  ServerErrorReply,
  TextReply,
  ToolCall,
  ToolCallsReply,
  Usage,
} from "./reply";

/*
 * Constructors for the common replies. Each returns plain data of `ReplySchema` (the schema is the truth;
 * these only spare the `type` field), checked when `script()` enqueues it.
 */

export function text(value: string, options: { usage?: Usage } = {}): TextReply {
  return { type: "text", text: value, ...options };
}

export function toolCalls(calls: ToolCall[], options: { text?: string; usage?: Usage } = {}): ToolCallsReply {
  return { type: "tool_calls", calls, ...options };
}

/*
 * Pipeline handoff behaviours: the engine's `submit_handoff` and `report_blocked` tools called by the model,
 * and a final message holding the handoff as JSON (the fallback for agents without the tool).
 */

/** The model calls `submit_handoff` with `handoff` as its arguments. */
export function submitHandoff(
  handoff: Record<string, unknown>,
  options: { usage?: Usage } = {},
): ToolCallsReply {
  return toolCalls([{ name: "submit_handoff", arguments: handoff }], options);
}

/** The model calls `report_blocked` with `{ reason }`. */
export function reportBlocked(reason: string, options: { usage?: Usage } = {}): ToolCallsReply {
  return toolCalls([{ name: "report_blocked", arguments: { reason } }], options);
}

/** A final message ending with `value` in a ```json fenced block. */
export function finalJson(value: unknown, options: { before?: string; usage?: Usage } = {}): TextReply {
  const before = options.before ?? "Done.";
  return text(
    `${before}\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`,
    options.usage ? { usage: options.usage } : {},
  );
}

/** A reply computed from the request, e.g. `respondWith((request) => text(lastUserText(request) ?? ""))`. */
export function respondWith(respond: ReplyFunction): FunctionReply {
  return { type: "function", respond };
}

/** 429; `retryAfterDate` may be a `Date` (sent as its HTTP-date). */
export function rateLimited(
  options: {
    retryAfterSeconds?: number;
    retryAfterMs?: number;
    retryAfterDate?: Date | string;
    message?: string;
  } = {},
): RateLimitedReply {
  const { retryAfterDate, ...rest } = options;
  return {
    type: "rate_limited",
    ...rest,
    ...(retryAfterDate === undefined
      ? {}
      : {
          retryAfterDate: typeof retryAfterDate === "string" ? retryAfterDate : retryAfterDate.toUTCString(),
        }),
  };
}

export function serverError(options: { status?: number; message?: string } = {}): ServerErrorReply {
  return { type: "server_error", ...options };
}

export function overloaded(options: { message?: string } = {}): OverloadedReply {
  return { type: "overloaded", ...options };
}

export function quotaExhausted(
  options: { anthropicShape?: QuotaExhaustedReply["anthropicShape"]; message?: string } = {},
): QuotaExhaustedReply {
  return { type: "quota_exhausted", ...options };
}

export function invalidKey(options: { message?: string } = {}): InvalidKeyReply {
  return { type: "invalid_key", ...options };
}

export function contextOverflow(options: { limit: number; tokens?: number }): ContextOverflowReply {
  return { type: "context_overflow", ...options };
}

export function httpError(options: Omit<HttpErrorReply, "type" | "delayMs">): HttpErrorReply {
  return { type: "http_error", ...options };
}

export function dropMidStream(options: { afterEvents: number; reply?: ContentReply }): DropMidStreamReply {
  return { type: "drop_mid_stream", ...options };
}

export function endWithoutFinish(options: { reply?: ContentReply } = {}): EndWithoutFinishReply {
  return { type: "end_without_finish", ...options };
}

export function hang(options: { sendHeaders?: boolean } = {}): HangReply {
  return { type: "hang", ...options };
}

/** The same reply, sent after `ms` milliseconds. */
export function delayed<R extends Reply | DataReply>(ms: number, reply: R): R {
  return { ...reply, delayMs: ms };
}
