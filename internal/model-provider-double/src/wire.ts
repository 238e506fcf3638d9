import type { Prompt } from "./prompt";
import type {
  ContentReply,
  ContextOverflowReply,
  HttpErrorReply,
  InvalidKeyReply,
  OverloadedReply,
  QuotaExhaustedReply,
  RateLimitedReply,
  ServerErrorReply,
  Usage,
} from "./reply";

/** The replies that are an HTTP error status with the wire format's error body. */
export type ErrorReply =
  | RateLimitedReply
  | ServerErrorReply
  | OverloadedReply
  | QuotaExhaustedReply
  | InvalidKeyReply
  | ContextOverflowReply
  | HttpErrorReply;

export const ERROR_REPLY_TYPES: ReadonlySet<string> = new Set<ErrorReply["type"]>([
  "rate_limited",
  "server_error",
  "overloaded",
  "quota_exhausted",
  "invalid_key",
  "context_overflow",
  "http_error",
]);

/** What the double read of a request, and its own 4xx when the provider would have refused the request. */
export type RequestReading = { prompt: Prompt; refusal: HttpErrorReply | null };

/** What a wire format needs to know about the request to render a reply to it. */
export type RenderContext = {
  seq: number;
  model: string;
  usage: Usage;
  /** OpenAI `stream_options.include_usage`: a usage chunk goes before `[DONE]`. */
  includeUsage: boolean;
  /** Unix seconds, as `created` fields carry. */
  created: number;
};

export type ErrorContext = {
  seq: number;
  promptTokens: number;
  headers: Record<string, string>;
};

/** A whole HTTP answer, written in one go. */
export type HttpAnswer = { status: number; headers: Record<string, string>; body: string };

/** One provider's wire format: bodies, SSE frames and error bodies for the replies. */
export type WireFormat = {
  /** The JSON body answering a non-streaming request; unfinished, it carries a null finish/stop reason. */
  message(reply: ContentReply, context: RenderContext, finished: boolean): string;
  /** The SSE frames answering a streaming request, each complete with its blank line. */
  events(reply: ContentReply, context: RenderContext, finished: boolean): string[];
  error(reply: ErrorReply, context: ErrorContext): HttpAnswer;
};

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
} as const;

export const JSON_HEADERS = { "content-type": "application/json" } as const;

/**
 * The retry headers of a 429: `retry-after` (seconds, or an HTTP-date, which wins when both are given)
 * and `retry-after-ms`, exactly as the reply asks.
 */
export function retryHeaders(reply: RateLimitedReply): Record<string, string> {
  const headers: Record<string, string> = {};
  if (reply.retryAfterSeconds !== undefined) headers["retry-after"] = String(reply.retryAfterSeconds);
  if (reply.retryAfterDate !== undefined) headers["retry-after"] = reply.retryAfterDate;
  if (reply.retryAfterMs !== undefined) headers["retry-after-ms"] = String(reply.retryAfterMs);
  return headers;
}

/** The reported prompt size of a context overflow: as given, else over the limit by at least one token. */
export function overflowTokens(reply: ContextOverflowReply, promptTokens: number): number {
  return reply.tokens ?? Math.max(promptTokens, reply.limit + 1);
}

/** A human hint for a rate limit, naming the wait when one is known. */
export function retryHint(reply: RateLimitedReply): string {
  if (reply.retryAfterMs !== undefined) return ` Please try again in ${reply.retryAfterMs}ms.`;
  if (reply.retryAfterSeconds !== undefined) return ` Please try again in ${reply.retryAfterSeconds}s.`;
  if (reply.retryAfterDate !== undefined) return ` Please try again after ${reply.retryAfterDate}.`;
  return " Please try again later.";
}
