import { CapturedTextSchema } from "@icode/workflow-graph";
import { TokenUsageSchema } from "@icode/workflow-scheduler";
import { z } from "zod";

/**
 * One agent attempt's transcript, kept with the run's records beside the node diagnostics
 * (`nodes/<activation>.<attempt>.transcript.<hash8>.json`, docs/records.md): the messages as the runtime
 * exchanged them, every tool call with its input and result, the tokens used and, for an ACP agent, what it
 * wrote to stderr. A native attempt that continues an earlier one (`continued_from`) holds the whole
 * conversation so far; an ACP attempt holds only its own session.
 */
export const TranscriptMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  /** Text of the message (for `tool`: the result as the model saw it). */
  content: z.string(),
  /** Tool calls the assistant made in this message. */
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), input: z.json() })).optional(),
  /** For `tool`: which call this answers, and whether it failed. */
  tool_call_id: z.string().optional(),
  is_error: z.boolean().optional(),
  /** The attempt that added the message. */
  attempt: z.number().int().min(1),
});

export const ToolCallRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  input: z.json(),
  status: z.enum(["completed", "failed", "rejected", "cancelled"]),
  output: z.string(),
  /** How approval went (`level_allows`, `bypass`, `rejected by callback`, …). */
  approval: z.string(),
  started_at: z.number(),
  ended_at: z.number(),
  attempt: z.number().int().min(1),
});

export const AgentTranscriptSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  attempt: z.number().int().min(1),
  runtime: z.enum(["native", "acp"]),
  profile: z.string(),
  /** The model profile id (native) or the model id asked of the ACP agent, or `null`. */
  model: z.string().nullable(),
  continued_from: z.number().int().min(1).nullable(),
  messages: z.array(TranscriptMessageSchema),
  tool_calls: z.array(ToolCallRecordSchema),
  usage: TokenUsageSchema.nullable(),
  /** An ACP agent's stderr (the last part, bounded), or `null`. */
  stderr: CapturedTextSchema.nullable(),
  /** How the attempt ended, as the node error class, or `completed`. */
  outcome: z.string(),
});
export type AgentTranscript = z.infer<typeof AgentTranscriptSchema>;
