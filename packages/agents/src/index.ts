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
export { type AgentExecutorOptions, type BoundAgentNode, createAgentExecutor } from "./executor";
export { defaultRunners } from "./runners";
export type { AgentTool, SubAgentRunner, ToolContext, ToolOutcome, Toolset, ToolsetOptions } from "./tool";
// The native loop's tools and the MCP client (src/tools/).
export { buildToolset, UNAVAILABLE_TOOL_KINDS } from "./tools/build-toolset";
export {
  TOOLSET_WARNING_CODES,
  type ToolsetWarning,
  type ToolsetWarningCode,
  ToolsetWarningCodeSchema,
  ToolsetWarningSchema,
} from "./tools/codes";
export { type AgentTranscript, AgentTranscriptSchema } from "./transcript";
