import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import { z } from "zod";
import type { AgentProfile } from "./config";
import { AgentProfileFileSchema } from "./schema/agent-profile";

/**
 * An external coding agent the engine knows how to start over ACP. Presets are data: the engine offers
 * those whose command is on `PATH` as built-in profiles (`acpPresetProfile`); none of these programs is a
 * dependency of ours. docs/agents.md has one worked example each.
 */
export const AcpPresetSchema = z.object({
  /** The profile name it is offered under (a user or project profile of that name hides it). */
  name: z.string().min(1),
  /** A fixed id, like the built-in agents'. */
  id: z.string().regex(/^[0-9a-f]{12}$/u),
  display_name: z.string(),
  description: z.string(),
  command: z.string().min(1),
  args: z.array(z.string()),
  /** How a user gets the command (for messages and docs). */
  install: z.string(),
  /** How a user logs in once, so that the agent needs no `authenticate` from the engine. */
  login: z.string(),
});
export type AcpPreset = z.infer<typeof AcpPresetSchema>;

export const ACP_PRESETS: readonly AcpPreset[] = z.array(AcpPresetSchema).parse([
  {
    name: "Claude",
    id: "b011ac900001",
    display_name: "Claude Code (ACP)",
    description: "Claude Code through the claude-agent-acp adapter.",
    command: "claude-agent-acp",
    args: [],
    install: "npm install -g @agentclientprotocol/claude-agent-acp",
    login: "run `claude` once and log in, or pass ANTHROPIC_API_KEY through acp.env",
  },
  {
    name: "Codex",
    id: "b011ac900002",
    display_name: "Codex (ACP)",
    description: "OpenAI Codex through the codex-acp adapter.",
    command: "codex-acp",
    args: [],
    install: "npm install -g @zed-industries/codex-acp",
    login: "run `codex login` once, or pass OPENAI_API_KEY through acp.env",
  },
  {
    name: "Gemini",
    id: "b011ac900003",
    display_name: "Gemini CLI (ACP)",
    description: "Google's Gemini CLI in its ACP mode.",
    command: "gemini",
    args: ["--acp"],
    install: "npm install -g @google/gemini-cli",
    login: "run `gemini` once and log in, or pass GEMINI_API_KEY through acp.env",
  },
  {
    name: "OpenCode",
    id: "b011ac900004",
    display_name: "OpenCode (ACP)",
    description: "OpenCode in its ACP mode.",
    command: "opencode",
    args: ["acp"],
    install: "npm install -g opencode-ai",
    login: "run `opencode auth login` once, or pass the provider's API key through acp.env",
  },
  {
    name: "Kimi",
    id: "b011ac900005",
    display_name: "Kimi Code CLI (ACP)",
    description: "Moonshot's Kimi Code CLI in its ACP mode.",
    command: "kimi",
    args: ["acp"],
    install: "see https://moonshotai.github.io/kimi-cli/ (the `kimi` command)",
    login: "run `kimi login` once in a terminal",
  },
]);

/** A preset and where its command was found on `PATH`, or null. */
export interface AcpPresetAvailability {
  readonly preset: AcpPreset;
  readonly path: string | null;
}

async function executable(file: string, platform: NodeJS.Platform): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    if (platform !== "win32") await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds `command` as a shell would: a path is checked as is; a bare name in each `PATH` directory in order
 * (on Windows with each `PATHEXT` extension). Returns the first executable file, or null.
 */
export async function findOnPath(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): Promise<string | null> {
  const lookup = (name: string) =>
    platform === "win32" ? Object.entries(env).find(([k]) => k.toUpperCase() === name)?.[1] : env[name];
  const extensions =
    platform === "win32"
      ? ["", ...(lookup("PATHEXT") ?? ".COM;.EXE;.BAT;.CMD").split(";").filter((e) => e !== "")]
      : [""];
  if (isAbsolute(command) || command.includes("/") || (platform === "win32" && command.includes("\\"))) {
    for (const ext of extensions) if (await executable(command + ext, platform)) return command + ext;
    return null;
  }
  const sep = platform === "win32" ? ";" : delimiter;
  for (const dir of (lookup("PATH") ?? "").split(sep)) {
    if (dir === "") continue;
    for (const ext of extensions) {
      const file = join(dir, command + ext);
      if (await executable(file, platform)) return file;
    }
  }
  return null;
}

/** Every preset, with where its command is on the engine's `PATH` (null: not installed). */
export async function findAcpPresets(
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): Promise<AcpPresetAvailability[]> {
  return Promise.all(
    ACP_PRESETS.map(async (preset) => ({ preset, path: await findOnPath(preset.command, env, platform) })),
  );
}

/**
 * The preset as a built-in ACP profile, parsed through the profile file schema like the shipped agents
 * (sub-agent-only, every other section at its default).
 */
export function acpPresetProfile(preset: AcpPreset): AgentProfile {
  const settings = AgentProfileFileSchema.parse({
    name: preset.name,
    id: preset.id,
    display_name: preset.display_name,
    description: preset.description,
    sub_agent_only: true,
    acp: { command: preset.command, args: preset.args },
  });
  const { id: _id, metadata: _metadata, ...rest } = settings;
  return { ...rest, id: preset.id, source: "builtin", file: null, digest: null, kind: "acp" };
}
