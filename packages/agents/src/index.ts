/**
 * @module @icode/workflow-agents
 * Agent nodes: the native agent loop on model providers (OpenAI-compatible and Anthropic) with its tools
 * and MCP servers, and external coding agents over the Agent Client Protocol. Profiles and models come from
 * `@icode/agent-profiles`; this package is what runs them, as the scheduler's `runAgent` executor.
 *
 * @example
 * import { createAcpAttempt, findAcpPresets } from "@icode/workflow-agents";
 * const runAcp = createAcpAttempt({ mcpServers: () => [] });
 * const result = await runAcp({ request, io, profile, config, workspace, env, chrysHome, homeDir,
 *   approvalMode: "bypass", transcript: (t) => store(t), modelId: null });
 * // → { status: "completed", value: { text: "…the agent's last message…", data: null } }
 * //   or { status: "failed", error: { class: "acp_refused", retryable: false, … } }
 * (await findAcpPresets(process.env)).filter((p) => p.path !== null).map((p) => p.preset.name);
 * // → e.g. ["Claude", "Gemini"]: the ACP runtimes installed on PATH
 */

// The ACP adapter: external coding agents over the Agent Client Protocol (src/acp/).
export {
  ACP_ERROR_CLASSES,
  ACP_RETRYABLE_CLASSES,
  ACP_WARNING_CODES,
  type AcpErrorClass,
  AcpErrorClassSchema,
  type AcpWarningCode,
  AcpWarningCodeSchema,
} from "./acp/codes";
export { ACP_BASE_ENV, ACP_DEPTH_ENV } from "./acp/launch";
export { type AcpMcpServer, AcpMcpServerSchema } from "./acp/mcp-servers";
export { type AcpRunnerOptions, createAcpAttempt, runAcpAttempt } from "./acp/run-attempt";
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
export { type AgentExecutorOptions, type BoundAgentNode, createAgentExecutor } from "./executor";
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
