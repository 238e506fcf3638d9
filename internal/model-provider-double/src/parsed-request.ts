import { z } from "zod";

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
