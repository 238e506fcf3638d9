// The shapes `loadAgentConfig` returns, shared by the loaders, matching, selection and listings.

import type { NormalizationChange } from "./normalize";
import type { ConfigProblem } from "./problems";
import type { AgentProfileSettings } from "./schema/agent-profile";
import type { ModelProfileSettings } from "./schema/model-profile";
import type { ExplicitSettings, ResolvedSettings } from "./settings";

/** Where an agent profile comes from, lowest first: a profile hides lower ones of the same name. */
export const PROFILE_SOURCES = ["builtin", "user", "project"] as const;

export type ProfileSource = (typeof PROFILE_SOURCES)[number];

/** An effective agent profile: its settings after defaults, where it came from, and what kind it is. */
export type AgentProfile = Omit<AgentProfileSettings, "id" | "metadata"> & {
  /** Null when a user profile's assigned id could not be written (it cannot be matched by id). */
  id: string | null;
  source: ProfileSource;
  /** Absolute path of the file, null for built-ins. */
  file: string | null;
  /** SHA-256 (hex) of the file as loaded, null for built-ins. */
  digest: string | null;
  kind: "native" | "acp";
};

/** A loaded model profile. `provider` is kept as written, so an unknown one makes the profile unusable. */
export type ModelProfile = ModelProfileSettings & {
  id: string;
  file: string;
  digest: string;
  usable: boolean;
  /** Why it is not usable, or null. */
  unusableReason: string | null;
};

/** Everything `loadAgentConfig` found. */
export interface AgentConfig {
  /** One profile per name after hiding, sorted by name ignoring case. */
  profiles: AgentProfile[];
  /** Profiles hidden by a profile of the same name from a higher source. */
  hidden: AgentProfile[];
  /** Every loaded model profile, sorted by name ignoring case, then id. */
  models: ModelProfile[];
  settings: ResolvedSettings;
  /** The default main agent (`agent.default_profile`, then `Code`, then the first main agent), or null. */
  defaultProfile: AgentProfile | null;
  /** The usable model `model.profile.active` resolves to, or null. */
  activeModel: ModelProfile | null;
  problems: ConfigProblem[];
  /** Renames and id write-backs done to user files while loading. */
  changes: NormalizationChange[];
  /** The folders and files read (absolute). */
  locations: ConfigLocations;
}

export interface ConfigLocations {
  userAgents: string;
  projectAgents: string;
  models: string;
  userSettings: string;
  /** Null when the user settings do not enable project settings (`project.config_enabled: true`). */
  projectSettings: string | null;
}

export interface LoadAgentConfigOptions {
  /** The configuration directory (`CHRYS_HOME`, else `~/.chrys`). */
  chrysHome: string;
  /** The working directory: project profiles and settings are read from `<cwd>/.chrys/`. */
  cwd: string;
  /** The engine process's environment (settings variables). */
  env: Readonly<Record<string, string | undefined>>;
  /** The user's home directory (`~` in paths). */
  homeDir: string;
  /** Rename and rewrite user profile files into canonical form (default true); false changes nothing on disk. */
  normalize?: boolean;
  /** Offer the ACP presets whose command is on the environment's `PATH` as built-in profiles (default true). */
  acpPresets?: boolean;
  /** Choices of the command or session, which win over every other settings source. */
  explicit?: ExplicitSettings;
}

/** True for profiles that can be a main agent: not ACP, not sub-agent-only. */
export function launchableAsMain(p: AgentProfile): boolean {
  return p.kind === "native" && !p.sub_agent_only;
}

/** Sorts by name ignoring case, then by name exactly (the `icode agents` order). */
export function sortProfiles(list: AgentProfile[]): AgentProfile[] {
  return list.sort((a, b) => compareFolded(a.name, b.name) || compareCodeUnits(a.name, b.name));
}

export function compareFolded(a: string, b: string): number {
  return compareCodeUnits(a.toLowerCase(), b.toLowerCase());
}

export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
