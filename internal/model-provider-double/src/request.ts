import { z } from "zod";
import { DataReplySchema } from "./reply";

/** The two wire formats the double speaks, chosen by path: chat completions, or Anthropic messages. */
export const WIRES = ["openai", "anthropic"] as const;
export const WireSchema = z.enum(WIRES);
export type Wire = z.infer<typeof WireSchema>;

/** A request as a reply function sees it. */
export const ParsedRequestSchema = z.object({
  /** 1 for the first request the double saw (or the first after `reset()`), then 2, 3, … */
  seq: z.number().int().min(1),
  wire: WireSchema,
  method: z.string(),
  path: z.string(),
  /** Lower-case names; repeated headers joined with ", ". */
  headers: z.record(z.string(), z.string()),
  /** The route key: the body's `model`, or "" when it has none. */
  route: z.string(),
  stream: z.boolean(),
  /** The parsed JSON body (null when the body was not JSON). */
  body: z.unknown(),
});
export type ParsedRequest = z.infer<typeof ParsedRequestSchema>;

/**
 * How a request ended: its reply fully written, its connection destroyed by a drop reply, closed by the
 * client (an abort, a timeout) or by `close()` before the reply was written, or still open.
 */
export const REQUEST_OUTCOMES = [
  "pending",
  "completed",
  "dropped",
  "client_closed",
  "server_closed",
] as const;
export const RequestOutcomeSchema = z.enum(REQUEST_OUTCOMES);
export type RequestOutcome = z.infer<typeof RequestOutcomeSchema>;

/** Where a reply came from: the route's script, the default reply, or the double itself (404, bad JSON, a throw). */
export const REPLY_SOURCES = ["script", "default", "double"] as const;
export const ReplySourceSchema = z.enum(REPLY_SOURCES);
export type ReplySource = z.infer<typeof ReplySourceSchema>;

/** What the double remembers of every request it received. */
export const RecordedRequestSchema = ParsedRequestSchema.extend({
  /** Null for a path the double does not serve (answered 404). */
  wire: WireSchema.nullable(),
  /** The TCP connection it came on: 1 for the first the double accepted; equal numbers mean keep-alive reuse. */
  connection: z.number().int().min(1),
  /** Epoch milliseconds, with a fractional part. */
  arrivedAt: z.number(),
  finishedAt: z.number().nullable(),
  source: ReplySourceSchema,
  /** The reply chosen (a function reply: its result, null until it returns). A delayed reply shows at once. */
  reply: DataReplySchema.nullable(),
  outcome: RequestOutcomeSchema,
  /** True when the reply was written to the end (`outcome: "completed"`). */
  completed: z.boolean(),
});
export type RecordedRequest = z.infer<typeof RecordedRequestSchema>;
