import { z } from "zod";

/**
 * Text a process printed, as the engine keeps it: the first part up to a limit (`truncated` past it). Node
 * attempts (`print()` in a node), loading a workflow, and an ACP agent's stderr are captured this way.
 */
export const CapturedTextSchema = z.object({ text: z.string(), truncated: z.boolean() });
export type CapturedText = z.infer<typeof CapturedTextSchema>;

/**
 * Output that belongs to no node attempt (fd-level writes, child processes): the last part up to a limit,
 * with the bytes dropped before it counted (clarification 17).
 */
export const TailTextSchema = z.object({ text: z.string(), dropped_bytes: z.number().int().min(0) });
export type TailText = z.infer<typeof TailTextSchema>;
