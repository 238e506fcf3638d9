import { z } from "zod";

/**
 * Codes of the problems `buildToolset` reports in `Toolset.warnings`: none of them stops the attempt, and
 * the native loop shows each as a `warning` activity. `skill_invalid` and `skill_root_unreadable` are the
 * codes `discoverSkills` (agent profiles) uses for skills that could not be offered.
 */
export const TOOLSET_WARNING_CODES = [
  "tool_kind_unavailable",
  "tool_name_conflict",
  "tool_name_invalid",
  "mcp_server_unavailable",
  "mcp_allowed_tool_missing",
  "sub_agent_skipped",
  "skill_invalid",
  "skill_root_unreadable",
] as const;
export const ToolsetWarningCodeSchema = z.enum(TOOLSET_WARNING_CODES);
export type ToolsetWarningCode = z.infer<typeof ToolsetWarningCodeSchema>;

export const ToolsetWarningSchema = z.object({ code: ToolsetWarningCodeSchema, message: z.string() });
export type ToolsetWarning = z.infer<typeof ToolsetWarningSchema>;
