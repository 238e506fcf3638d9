/**
 * @module @icode/workflow-agents
 * Agent nodes: the native agent loop on model providers (OpenAI-compatible and Anthropic) with its tools
 * and MCP servers, and external coding agents over the Agent Client Protocol. Profiles and models come from
 * `@icode/agent-profiles`; this package is what runs them, as the scheduler's `runAgent` executor.
 */
export type {
  AcpAttempt,
  AcpAttemptContext,
  ApprovalCallback,
  AttemptContext,
  NativeAttempt,
  NativeAttemptContext,
} from "./attempt";
export {
  AGENT_ERROR_CLASSES,
  type AgentErrorClass,
  AgentErrorClassSchema,
  RETRYABLE_AGENT_CLASSES,
  TRANSIENT_AGENT_CLASSES,
} from "./codes";
// native: the agent loop on model providers
export { classifyModelError, type ModelFailure } from "./native/classify";
export {
  type AcpSubAgentRunner,
  createNativeRunner,
  MAX_SUB_AGENT_DEPTH,
  type NativeRunner,
  type NativeRunnerOptions,
  type ToolsetBuilder,
} from "./native/runner";
export type { AgentTool, SubAgentRunner, ToolContext, ToolOutcome, Toolset, ToolsetOptions } from "./tool";
export { type AgentTranscript, AgentTranscriptSchema } from "./transcript";
