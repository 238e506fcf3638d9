import { z } from "zod";
import type { ParsedRequest } from "./parsed-request";

/**
 * Every reply may wait this many milliseconds before answering (before the status line, or before the
 * first byte of a hang). A client that gives up during the wait finds nothing written.
 */
const delay = { delayMs: z.number().int().min(0).optional() };

/** Token counts to report; when a reply has none, the double estimates them (about 4 characters a token). */
export const UsageSchema = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
});
export type Usage = z.infer<typeof UsageSchema>;

export const TextReplySchema = z.object({
  type: z.literal("text"),
  text: z.string(),
  usage: UsageSchema.optional(),
  ...delay,
});
export type TextReply = z.infer<typeof TextReplySchema>;

/** One tool call: the arguments are a JSON object, sent as a string (OpenAI) or as `input` (Anthropic). */
export const ToolCallSchema = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  /** The call's id; by default `call_<request>_<n>` (OpenAI) or `toolu_<request>_<n>` (Anthropic). */
  id: z.string().min(1).optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** The model asks for one or more tool calls (`tool_calls` / `tool_use`), optionally saying something first. */
export const ToolCallsReplySchema = z.object({
  type: z.literal("tool_calls"),
  calls: z.array(ToolCallSchema).min(1),
  text: z.string().optional(),
  usage: UsageSchema.optional(),
  ...delay,
});
export type ToolCallsReply = z.infer<typeof ToolCallsReplySchema>;

/** What a model says: the body of a reply that can also be cut short (dropped, or left without a finish). */
export const ContentReplySchema = z.discriminatedUnion("type", [TextReplySchema, ToolCallsReplySchema]);
export type ContentReply = z.infer<typeof ContentReplySchema>;

const httpDate = z.string().refine((value) => !Number.isNaN(Date.parse(value)), {
  message: 'expected an HTTP-date such as "Wed, 21 Oct 2026 07:28:00 GMT"',
});

/**
 * 429 rate limit (`rate_limit_exceeded` / `rate_limit_error`). Each retry field given becomes its header:
 * `retry-after` in seconds, `retry-after-ms`, or `retry-after` as an HTTP-date (the date wins over seconds).
 */
export const RateLimitedReplySchema = z.object({
  type: z.literal("rate_limited"),
  retryAfterSeconds: z.number().min(0).optional(),
  retryAfterMs: z.number().min(0).optional(),
  retryAfterDate: httpDate.optional(),
  message: z.string().optional(),
  ...delay,
});
export type RateLimitedReply = z.infer<typeof RateLimitedReplySchema>;

/** A 5xx internal error (`server_error` / `api_error`); 500 unless another 5xx status is given. */
export const ServerErrorReplySchema = z.object({
  type: z.literal("server_error"),
  status: z.number().int().min(500).max(599).optional(),
  message: z.string().optional(),
  ...delay,
});
export type ServerErrorReply = z.infer<typeof ServerErrorReplySchema>;

/** Overloaded: Anthropic 529 `overloaded_error`, OpenAI style 503. */
export const OverloadedReplySchema = z.object({
  type: z.literal("overloaded"),
  message: z.string().optional(),
  ...delay,
});
export type OverloadedReply = z.infer<typeof OverloadedReplySchema>;

/** How Anthropic says the money ran out: the 400 credit-balance message it sends today, 402 or 403. */
export const ANTHROPIC_QUOTA_SHAPES = ["credit_balance", "billing_error", "permission_error"] as const;

/** Quota or billing exhausted: OpenAI 429 `insufficient_quota`; Anthropic in the shape chosen. */
export const QuotaExhaustedReplySchema = z.object({
  type: z.literal("quota_exhausted"),
  anthropicShape: z.enum(ANTHROPIC_QUOTA_SHAPES).optional(),
  message: z.string().optional(),
  ...delay,
});
export type QuotaExhaustedReply = z.infer<typeof QuotaExhaustedReplySchema>;

/** 401: OpenAI `invalid_api_key`, Anthropic `authentication_error`. */
export const InvalidKeyReplySchema = z.object({
  type: z.literal("invalid_key"),
  message: z.string().optional(),
  ...delay,
});
export type InvalidKeyReply = z.infer<typeof InvalidKeyReplySchema>;

/**
 * 400 context overflow naming the limit: OpenAI `context_length_exceeded` ("This model's maximum context
 * length is N tokens…"), Anthropic `invalid_request_error` ("prompt is too long: X tokens > N maximum").
 * `tokens` is the prompt size reported; by default the larger of the request's estimate and `limit + 1`.
 */
export const ContextOverflowReplySchema = z.object({
  type: z.literal("context_overflow"),
  limit: z.number().int().min(1),
  tokens: z.number().int().min(1).optional(),
  ...delay,
});
export type ContextOverflowReply = z.infer<typeof ContextOverflowReplySchema>;

/**
 * Any other error status, in the wire format's error body. `errorType` defaults to the provider's type for
 * the status (Anthropic) or `invalid_request_error` / `server_error` (OpenAI); `headers` are added as given.
 */
export const HttpErrorReplySchema = z.object({
  type: z.literal("http_error"),
  status: z.number().int().min(400).max(599),
  message: z.string(),
  errorType: z.string().optional(),
  code: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  ...delay,
});
export type HttpErrorReply = z.infer<typeof HttpErrorReplySchema>;

/**
 * The connection is destroyed after `afterEvents` SSE events of `reply` (all of them if it has fewer),
 * before the response ends. A non-streaming request gets its headers and the first half of the body.
 */
export const DropMidStreamReplySchema = z.object({
  type: z.literal("drop_mid_stream"),
  afterEvents: z.number().int().min(0),
  reply: ContentReplySchema.optional(),
  ...delay,
});
export type DropMidStreamReply = z.infer<typeof DropMidStreamReplySchema>;

/**
 * `reply` without its ending: the stream carries the content but no `finish_reason` chunk (OpenAI; `[DONE]`
 * still follows) or no `message_delta`/`message_stop` (Anthropic), and ends cleanly. A non-streaming request
 * gets `finish_reason: null` / `stop_reason: null`.
 */
export const EndWithoutFinishReplySchema = z.object({
  type: z.literal("end_without_finish"),
  reply: ContentReplySchema.optional(),
  ...delay,
});
export type EndWithoutFinishReply = z.infer<typeof EndWithoutFinishReplySchema>;

/**
 * Never answer: with `sendHeaders` the status line and headers go out (and are flushed) and then nothing,
 * else nothing at all. The request stays open until the client gives up or the double closes.
 */
export const HangReplySchema = z.object({
  type: z.literal("hang"),
  sendHeaders: z.boolean().optional(),
  ...delay,
});
export type HangReply = z.infer<typeof HangReplySchema>;

/** Every reply that is plain data: what a JSON script file can hold and what a request record shows. */
export const DataReplySchema = z.discriminatedUnion("type", [
  TextReplySchema,
  ToolCallsReplySchema,
  RateLimitedReplySchema,
  ServerErrorReplySchema,
  OverloadedReplySchema,
  QuotaExhaustedReplySchema,
  InvalidKeyReplySchema,
  ContextOverflowReplySchema,
  HttpErrorReplySchema,
  DropMidStreamReplySchema,
  EndWithoutFinishReplySchema,
  HangReplySchema,
]);
export type DataReply = z.infer<typeof DataReplySchema>;

/** Computes the reply from the parsed request, e.g. to echo the prompt. May be async; may throw (→ 500). */
export type ReplyFunction = (request: ParsedRequest) => DataReply | Promise<DataReply>;

export const FunctionReplySchema = z.object({
  type: z.literal("function"),
  respond: z.custom<ReplyFunction>((value) => typeof value === "function", {
    message: "expected a function (request) => reply",
  }),
  ...delay,
});
export type FunctionReply = z.infer<typeof FunctionReplySchema>;

/** A scripted reply: plain data, or a function of the request returning plain data. */
export const ReplySchema = z.discriminatedUnion("type", [...DataReplySchema.options, FunctionReplySchema]);
export type Reply = z.infer<typeof ReplySchema>;
