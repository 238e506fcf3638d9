import { z } from "zod";
import { ParsedRequestSchema, WireSchema } from "./parsed-request";
import { DataReplySchema } from "./reply";

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
