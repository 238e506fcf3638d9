import type { MemoryFile } from "@icode/agent-profiles/policy";

/**
 * The instructions an agent node is sent (workflow reference, "Agent profile support"): the profile's
 * `instructions`, then its memory files (each under its path), then what the toolset adds (MCP servers'
 * instructions, the skills on offer), then the node's `instructions_suffix`, each part apart by a blank line.
 */
export function buildInstructions(parts: {
  profile: string;
  memory: readonly MemoryFile[];
  toolset: readonly string[];
  suffix: string | null;
}): string {
  const out: string[] = [];
  if (parts.profile.trim() !== "") out.push(parts.profile.trim());
  if (parts.memory.length > 0) {
    out.push(
      [
        "# Memory",
        "Reference files loaded for this task:",
        ...parts.memory.map((file) => `## ${file.path}\n\n${file.content.trim()}`),
      ].join("\n\n"),
    );
  }
  for (const text of parts.toolset) if (text.trim() !== "") out.push(text.trim());
  if (parts.suffix !== null && parts.suffix.trim() !== "") out.push(parts.suffix.trim());
  return out.join("\n\n");
}
