import { z } from "zod";
import type { AgentProfile } from "./config";
import { type DiscoverSkillsOptions, discoverSkills } from "./skills";

/** One program a profile can start, as written (templates are not resolved). */
export const ProfileProgramSchema = z.object({
  via: z.enum(["acp", "mcp", "skill_script"]),
  command: z.string(),
  args: z.array(z.string()),
  /** The MCP server name, or the skill name, that starts it. */
  label: z.string().nullable(),
});
export type ProfileProgram = z.infer<typeof ProfileProgramSchema>;

/** What a trust preview lists for a profile, and whether a run that uses it needs trust. */
export const ProfileTrustSchema = z.object({
  name: z.string(),
  source: z.enum(["builtin", "user", "project"]),
  file: z.string().nullable(),
  /** SHA-256 of the file: part of a workflow's trust subject when `requiresTrust`. */
  digest: z.string().nullable(),
  programs: z.array(ProfileProgramSchema),
  /** True for project profiles that start any program (agent-profiles.md 1.6). */
  requiresTrust: z.boolean(),
});
export type ProfileTrust = z.infer<typeof ProfileTrustSchema>;

/**
 * The programs a profile can start: `acp.command` with `acp.args`; each enabled stdio MCP server's
 * `command` and `args`; and the scripts of skills found in roots inside the working directory (the
 * repository provides them). Project profiles that start any of these need trust; user and built-in
 * profiles never do.
 */
export async function profileTrust(
  profile: AgentProfile,
  options: DiscoverSkillsOptions,
): Promise<ProfileTrust> {
  const programs: ProfileProgram[] = [];
  if (profile.acp !== undefined) {
    programs.push({ via: "acp", command: profile.acp.command, args: [...profile.acp.args], label: null });
  } else {
    for (const server of profile.tools.mcp) {
      if (server.transport === "stdio" && server.enabled) {
        programs.push({ via: "mcp", command: server.command, args: [...server.args], label: server.name });
      }
    }
    const { skills } = await discoverSkills(profile, options);
    for (const skill of skills) {
      if (!skill.projectProvided) continue;
      for (const script of skill.scripts)
        programs.push({ via: "skill_script", command: script, args: [], label: skill.name });
    }
  }
  return {
    name: profile.name,
    source: profile.source,
    file: profile.file,
    digest: profile.digest,
    programs,
    requiresTrust: profile.source === "project" && programs.length > 0,
  };
}
