import type { AgentConfig, AgentProfile } from "./config";

export interface SubAgentTool {
  /** The profile called. */
  profile: AgentProfile;
  /** The tool name the parent sees: `tool_name`, else the sub-agent's name as is. */
  toolName: string;
  /** `tool_description`, else the sub-agent's description. */
  toolDescription: string;
  maxConcurrency: number;
}

/**
 * The sub-agent tools of a profile, as the agent loop registers them (agent-profiles.md 2.7): each entry's
 * `profile` is looked up by exact name among the loaded profiles; an unknown one is skipped with a warning
 * (ours). ACP profiles have none.
 */
export function subAgentTools(
  config: Pick<AgentConfig, "profiles">,
  parent: AgentProfile,
): { tools: SubAgentTool[]; warnings: string[] } {
  const tools: SubAgentTool[] = [];
  const warnings: string[] = [];
  if (parent.kind === "acp") return { tools, warnings };
  for (const entry of parent.sub_agents.agents) {
    const profile = config.profiles.find((p) => p.name === entry.profile);
    if (profile === undefined) {
      warnings.push(
        `sub-agent "${entry.profile}" of profile "${parent.name}" is not a loaded profile; it is skipped`,
      );
      continue;
    }
    tools.push({
      profile,
      toolName: entry.tool_name ?? profile.name,
      toolDescription: entry.tool_description ?? profile.description,
      maxConcurrency: entry.max_concurrency,
    });
  }
  return { tools, warnings };
}
