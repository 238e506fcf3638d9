import { z } from "zod";
import { ACP_ERROR_CLASSES } from "./acp/codes";

/**
 * The error classes agent attempts report (`NodeError.class`), one block per runtime; each has a heading
 * in docs/errors.md under "Agent node error classes". Whether a failure is retried is the class's
 * verdict (`retryable`), per the workflow reference's "Timeouts and retries" rows.
 */
export const AGENT_ERROR_CLASSES = [...ACP_ERROR_CLASSES] as const;
export const AgentErrorClassSchema = z.enum(AGENT_ERROR_CLASSES);
export type AgentErrorClass = z.infer<typeof AgentErrorClassSchema>;
