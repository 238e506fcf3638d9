/**
 * @module @icode/agent-profiles/policy
 * The pure policy helpers an agent loop calls, apart from the configuration API so that a front end that
 * only lists profiles does not load them: approval decisions, the shell filter, MCP tool names, memory and
 * skills a profile brings, sub-agent tools, `{{NAME}}` templates, request retries, web tool settings.
 *
 * @example
 * import { decideApproval, resolveTemplates } from "@icode/agent-profiles/policy";
 * decideApproval({ approval: profile.approval, tool: { kind: "shell", name: "shell" }, mode: "manual" });
 * // → { action: "ask", required: true, reason: "level_requires", level: "require", rule: … }
 */

export {
  type ApprovalDecision,
  type ApprovalMode,
  type ApprovalReason,
  type ApprovalRule,
  type ApprovalTarget,
  approvalLevel,
  decideApproval,
  isSafeReadOnlyCommand,
  isSensitivePath,
  type ToolRef,
} from "./approval";
export { MAX_TOOL_NAME_LENGTH, mcpControlToolNames, mcpToolName } from "./mcp-names";
export { estimateTokens, type LoadedMemory, loadMemory, MEMORY_TOKEN_LIMIT, type MemoryFile } from "./memory";
export { MAX_RETRY_DELAY_MS, maxTransientRetries, retryDelayMs } from "./retry";
export { checkShellCommand, READ_ONLY_COMMANDS, type ShellCheck } from "./shell-filter";
export { type DiscoverSkillsOptions, discoverSkills, type Skill } from "./skills";
export { type SubAgentTool, subAgentTools } from "./sub-agents";
export { resolveTemplates, type TemplateResult } from "./templates";
export { BUILTIN_TOOL_KINDS, SHELL_TOOL_NAMES, TOOL_KINDS, type ToolKind } from "./tool-kinds";
export {
  effectiveWebFetch,
  effectiveWebSearch,
  type WebFetchSettings,
  type WebSearchSettings,
} from "./web-tools";
