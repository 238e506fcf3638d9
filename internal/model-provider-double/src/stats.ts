import { z } from "zod";

/** What `GET /_double/stats` answers, for a benchmark that runs the double in another process. */
export const ProviderDoubleStatsSchema = z.object({
  requests: z.number().int().min(0),
  /** Requests per route key (the body's `model`). */
  counts: z.record(z.string(), z.number().int().min(0)),
  inFlight: z.number().int().min(0),
  maxInFlight: z.number().int().min(0),
});
export type ProviderDoubleStats = z.infer<typeof ProviderDoubleStatsSchema>;
