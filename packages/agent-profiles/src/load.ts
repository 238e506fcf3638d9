import { basename, extname, isAbsolute, join } from "node:path";
import { WorkflowError } from "@icode/workflow-errors";
import { BUILTIN_AGENTS } from "./builtins";
import { listProfileFiles, readConfigFile, sha256 } from "./files";
import { matchModel, matchProfile } from "./match";
import { type NormalizationChange, normalizeUserFiles, type UserFile } from "./normalize";
import type { ConfigProblem } from "./problems";
import { type AgentFileRead, readAgentProfile } from "./read/agent-profile";
import { readModelProfile } from "./read/model-profile";
import { readSettingsFile } from "./read/settings";
import type { AgentProfileSettings } from "./schema/agent-profile";
import { isProvider, type ModelProfileSettings, PROVIDERS } from "./schema/model-profile";
import { describeSetting, type ExplicitSettings, type ResolvedSettings, resolveSettings } from "./settings";
import { effectiveWebFetch, effectiveWebSearch } from "./web-tools";

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
  /** Choices of the command or session, which win over every other settings source. */
  explicit?: ExplicitSettings;
}

/**
 * Loads built-in, user and project agent profiles, model profiles and settings (agent-profiles.md 1 and 4).
 * Never throws for bad files: every problem is in `problems`, and one bad file never stops the others.
 */
export async function loadAgentConfig(options: LoadAgentConfigOptions): Promise<AgentConfig> {
  for (const key of ["chrysHome", "cwd", "homeDir"] as const) {
    if (!isAbsolute(options[key])) {
      throw new WorkflowError(
        "config_options_invalid",
        `loadAgentConfig: ${key} must be an absolute path, found ${JSON.stringify(options[key])}`,
        {
          hint: "resolve it first (the library never reads the process's current directory)",
        },
      );
    }
  }
  const report = new Report();
  const locations: ConfigLocations = {
    userAgents: join(options.chrysHome, "agents"),
    projectAgents: join(options.cwd, ".chrys", "agents"),
    models: join(options.chrysHome, "models"),
    userSettings: join(options.chrysHome, "settings.yaml"),
    projectSettings: null,
  };
  const { settings } = await loadSettings(options, locations, report);
  const models = await loadModels(locations.models, report);

  const builtin: AgentProfile[] = BUILTIN_AGENTS.map((p) => toProfile(p, p.id, "builtin", null, null));
  const takenIds = new Set<string>(builtin.map((p) => p.id as string));
  const failed: { source: ProfileSource; file: string; read: AgentFileRead }[] = [];

  const userDir = locations.userAgents;
  const userFiles = await readAgentFiles(userDir, "user agent profile", report);
  for (const f of userFiles) if (f.read.id !== null) takenIds.add(f.read.id);
  const normalized = await normalizeUserFiles(userDir, userFiles, {
    write: options.normalize ?? true,
    takenIds,
  });
  report.problems.push(...normalized.problems);
  for (const l of normalized.loaded) report.lineIndex(l.path, l.read.lineOf);
  const user = normalized.loaded.map((l) =>
    toProfile(l.read.settings as AgentProfileSettings, l.id, "user", l.path, l.digest),
  );
  for (const f of userFiles)
    if (f.read.settings === null) failed.push({ source: "user", file: f.path, read: f.read });

  const projectFiles = await readAgentFiles(
    join(options.cwd, ".chrys", "agents"),
    "project agent profile",
    report,
  );
  const project: AgentProfile[] = [];
  for (const f of projectFiles) {
    if (f.read.settings === null) {
      failed.push({ source: "project", file: f.path, read: f.read });
      continue;
    }
    const first = project.find((p) => p.name === f.read.name);
    if (first !== undefined) {
      report.add(
        f.path,
        "profile_duplicate_name",
        "error",
        `the project profile "${f.read.name}" is already loaded from ${basename(first.file as string)}, which comes first; this file is skipped. Give it a different name.`,
      );
      continue;
    }
    const name = f.read.name as string;
    const id = f.read.id ?? builtinIdFor(name) ?? sha256(`project:${name}`).slice(0, 12);
    project.push(toProfile(f.read.settings, id, "project", f.path, f.digest));
  }

  // Hiding: project over user over built-in, by exact name; the hiding profile replaces the hidden one.
  const byName = new Map<string, AgentProfile>();
  const hidden: AgentProfile[] = [];
  for (const p of [...project, ...user, ...builtin]) {
    if (byName.has(p.name)) hidden.push(p);
    else byName.set(p.name, p);
  }
  const profiles = sortProfiles([...byName.values()]);

  for (const f of failed) explainFallback(report, f, byName);
  checkIds(report, profiles);
  checkNameCase(report, profiles);
  checkBindings(report, profiles, models);
  checkWebTools(report, profiles, settings);

  const config: AgentConfig = {
    profiles,
    hidden,
    models,
    settings,
    defaultProfile: null,
    activeModel: null,
    problems: report.problems,
    changes: normalized.changes,
    locations,
  };
  config.defaultProfile = resolveDefaultProfile(config, report);
  config.activeModel = resolveActiveModel(config, report);
  return config;
}

function builtinIdFor(name: string): string | null {
  return BUILTIN_AGENTS.find((p) => p.name === name)?.id ?? null;
}

function toProfile(
  s: AgentProfileSettings,
  id: string | null,
  source: ProfileSource,
  file: string | null,
  digest: string | null,
): AgentProfile {
  const { id: _written, metadata: _m, ...rest } = s;
  return { ...structuredClone(rest), id, source, file, digest, kind: s.acp === undefined ? "native" : "acp" };
}

/** The problems of one load, and the line of each field of each file read, for problems found later. */
class Report {
  readonly problems: ConfigProblem[] = [];
  private readonly lines = new Map<string, (field: string) => number | null>();

  lineIndex(file: string, lineOf: ((field: string) => number | null) | undefined): void {
    if (lineOf !== undefined) this.lines.set(file, lineOf);
  }

  add(
    file: string | null,
    code: ConfigProblem["code"],
    severity: "error" | "warning",
    message: string,
    field: string | null = null,
  ): void {
    const line = file === null || field === null ? null : (this.lines.get(file)?.(field) ?? null);
    this.problems.push({ code, severity, file, line, field, message });
  }
}

async function readAgentFiles(dir: string, what: string, report: Report): Promise<UserFile[]> {
  const listed = await listProfileFiles(dir, what.replace(" profile", "s"));
  report.problems.push(...listed.problems);
  const out: UserFile[] = [];
  for (const path of listed.files) {
    const file = await readConfigFile(path, "the profile is not loaded");
    if (!file.ok) {
      report.problems.push(file.problem);
      continue;
    }
    const read = readAgentProfile(file.text, path);
    report.problems.push(...read.problems.sort(byLine));
    report.lineIndex(path, read.lineOf);
    out.push({ path, digest: file.digest, read });
  }
  return out;
}

function byLine(a: ConfigProblem, b: ConfigProblem): number {
  return (a.line ?? 0) - (b.line ?? 0);
}

async function loadSettings(options: LoadAgentConfigOptions, locations: ConfigLocations, report: Report) {
  const read = async (path: string, scope: "user" | "project") => {
    const file = await readConfigFile(path, "these settings are not used");
    if (!file.ok) {
      if (file.errno === "ENOENT") return null;
      report.problems.push({ ...file.problem, severity: "warning" });
      return null;
    }
    const r = readSettingsFile(file.text, path, scope);
    report.problems.push(...r.problems);
    report.lineIndex(path, r.lineOf);
    return { file: path, values: r.values, lineOf: r.lineOf };
  };
  const user = await read(locations.userSettings, "user");
  const projectEnabled =
    (user?.values["project"] as { config_enabled?: unknown } | undefined)?.config_enabled === true;
  if (projectEnabled) locations.projectSettings = join(options.cwd, ".chrys", "settings.yaml");
  const project =
    locations.projectSettings === null ? null : await read(locations.projectSettings, "project");
  const resolved = resolveSettings({ explicit: options.explicit, env: options.env, user, project });
  report.problems.push(...resolved.problems);
  return resolved;
}

async function loadModels(dir: string, report: Report): Promise<ModelProfile[]> {
  const listed = await listProfileFiles(dir, "model profiles");
  report.problems.push(...listed.problems);
  const models: ModelProfile[] = [];
  for (const path of listed.files) {
    const file = await readConfigFile(path, "the model profile is not loaded");
    if (!file.ok) {
      report.problems.push(file.problem);
      continue;
    }
    const read = readModelProfile(file.text, path, basename(path, extname(path)));
    report.problems.push(...read.problems.sort(byLine));
    report.lineIndex(path, read.lineOf);
    if (read.settings === null) continue;
    const reason = unusableReason(read.settings);
    models.push({
      ...read.settings,
      file: path,
      digest: file.digest,
      usable: reason === null,
      unusableReason: reason,
    });
  }
  models.sort((a, b) => compareFolded(a.name, b.name) || compareCodeUnits(a.id, b.id));
  const seenIds = new Map<string, ModelProfile>();
  const seenNames = new Map<string, ModelProfile>();
  for (const m of models) {
    const sameId = seenIds.get(m.id);
    if (sameId !== undefined)
      report.add(
        m.file,
        "model_duplicate_id",
        "warning",
        `the id "${m.id}" is also the id of ${sameId.file}; selecting it is ambiguous. Give one of them a new id.`,
        "id",
      );
    else seenIds.set(m.id, m);
    const key = m.name.toLowerCase();
    const sameName = seenNames.get(key);
    if (sameName !== undefined)
      report.add(
        m.file,
        "model_duplicate_name",
        "warning",
        `the name "${m.name}" is also used by ${sameName.file} (names are compared ignoring case); selecting it by name is ambiguous. Rename one of them.`,
        "name",
      );
    else seenNames.set(key, m);
  }
  return models;
}

/** Why a model profile cannot be selected (agent-profiles.md 4.2), or null when it is usable. */
export function unusableReason(m: ModelProfileSettings & { id: string }): string | null {
  if (m.id === "") return "its id is empty";
  if (m.name === "") return "its name is empty";
  if (!isProvider(m.provider))
    return `provider "${m.provider}" is not one of ${Object.keys(PROVIDERS).join(", ")}`;
  if (!(PROVIDERS[m.provider].styles as readonly string[]).includes(m.api_style))
    return `provider ${m.provider} does not support api_style ${m.api_style}`;
  if (m.model_id === "") return "model_id is not set";
  if (m.base_url !== "" && !/^https?:\/\//u.test(m.base_url))
    return `base_url "${m.base_url}" does not start with http:// or https://`;
  if (
    !(
      Number.isInteger(m.max_context_tokens) &&
      m.max_context_tokens > 0 &&
      Number.isInteger(m.max_output_tokens) &&
      m.max_output_tokens > 0
    )
  )
    return "its token limits are not positive integers";
  return null;
}

/** A skipped file whose name was readable: say which profile of that name is used instead. */
function explainFallback(
  report: Report,
  f: { source: ProfileSource; file: string; read: AgentFileRead },
  byName: Map<string, AgentProfile>,
): void {
  if (f.read.name === null) return;
  const first = report.problems.find((p) => p.file === f.file && p.severity === "error");
  if (first === undefined) return;
  const effective = byName.get(f.read.name);
  const lower =
    effective !== undefined && PROFILE_SOURCES.indexOf(effective.source) < PROFILE_SOURCES.indexOf(f.source);
  const sentence = lower
    ? ` The ${effective.source === "builtin" ? "built-in" : effective.source} profile "${f.read.name}" stays in effect.`
    : effective === undefined
      ? ` No other profile named "${f.read.name}" is loaded.`
      : "";
  if (sentence !== "") first.message = `${first.message.replace(/\.?$/u, ".")}${sentence}`;
}

function checkIds(report: Report, profiles: AgentProfile[]): void {
  const seen = new Map<string, AgentProfile>();
  for (const p of profiles) {
    if (p.id === null) continue;
    const first = seen.get(p.id);
    if (first === undefined) {
      seen.set(p.id, p);
      continue;
    }
    report.add(
      p.file,
      "profile_duplicate_id",
      "warning",
      `profiles "${first.name}" (${first.file ?? "built-in"}) and "${p.name}" have the same id ${p.id}; matching by that id is ambiguous. Remove id from the copy so that it gets its own.`,
      "id",
    );
  }
}

function checkNameCase(report: Report, profiles: AgentProfile[]): void {
  const seen = new Map<string, AgentProfile>();
  for (const p of profiles) {
    const key = p.name.toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, p);
    else
      report.add(
        p.file,
        "profile_name_case_conflict",
        "warning",
        `"${p.name}" and "${first.name}" (${first.file ?? "built-in"}) differ only in case; both load, and a case-insensitive selector matching both is ambiguous. Rename one of them.`,
        "name",
      );
  }
}

function checkBindings(report: Report, profiles: AgentProfile[], models: ModelProfile[]): void {
  for (const p of profiles) {
    const id = p.model.profile_id;
    if (p.kind !== "native" || id === "" || models.some((m) => m.id === id)) continue;
    report.add(
      p.file,
      "profile_model_missing",
      "warning",
      `model.profile_id "${id}" names no model profile (ids are listed by icode models); the profile uses the model chosen for the session or workflow instead`,
      "model.profile_id",
    );
  }
}

function checkWebTools(report: Report, profiles: AgentProfile[], settings: ResolvedSettings): void {
  for (const p of profiles) {
    if (p.kind !== "native") continue;
    for (const kind of ["web_search", "web_fetch"] as const) {
      const enabled = p.tools.builtins.includes(kind);
      if (!enabled) {
        if (p.tools[kind] !== undefined)
          report.add(
            p.file,
            "config_key_ignored",
            "warning",
            `tools.${kind} applies only when ${kind} is in tools.builtins; it is ignored`,
            `tools.${kind}`,
          );
        continue;
      }
      const result =
        kind === "web_search"
          ? effectiveWebSearch(settings.webSearch, p.tools.web_search)
          : effectiveWebFetch(settings.webFetch, p.tools.web_fetch);
      if (!result.ok && !result.off) {
        report.add(
          p.file,
          "profile_web_tool_omitted",
          "warning",
          `the ${kind} settings do not fit their mode: ${result.reason}; the ${kind} tool is left out`,
          `tools.${kind}`,
        );
        p.tools.builtins = p.tools.builtins.filter((b) => b !== kind);
      }
    }
  }
}

function resolveDefaultProfile(config: AgentConfig, report: Report): AgentProfile | null {
  const mains = config.profiles.filter(launchableAsMain);
  const wanted = config.settings.defaultProfile;
  const found = matchProfile({ profiles: mains }, wanted.value);
  if (found.ok) return found.profile;
  if (wanted.source !== "default") {
    const any = matchProfile(config, wanted.value);
    const why = any.ok
      ? `"${any.profile.name}" is ${any.profile.kind === "acp" ? "an ACP agent" : "sub-agent-only"}`
      : found.message;
    report.add(
      settingsFile(wanted),
      "settings_default_agent_unresolved",
      "warning",
      `${describeSetting("agent.default_profile", wanted)} is "${wanted.value}", which is not a profile that can be a main agent (${why}); falling back to Code, then to the first main agent`,
      "agent.default_profile",
    );
  }
  return mains.find((p) => p.name === "Code") ?? mains[0] ?? null;
}

function resolveActiveModel(config: AgentConfig, report: Report): ModelProfile | null {
  const wanted = config.settings.activeModel;
  if (wanted.value === null) return null;
  const found = matchModel(config, wanted.value);
  if (found.ok) return found.model;
  report.add(
    settingsFile(wanted),
    "settings_active_model_unresolved",
    "warning",
    `${describeSetting("model.profile.active", wanted)}: ${found.message}; there is no default model, so agents that need it cannot start`,
    "model.profile.active",
  );
  return null;
}

function settingsFile(s: { source: string; origin: string | null }): string | null {
  return s.source === "user" || s.source === "project" ? s.origin : null;
}

/** True for profiles that can be a main agent: not ACP, not sub-agent-only. */
export function launchableAsMain(p: AgentProfile): boolean {
  return p.kind === "native" && !p.sub_agent_only;
}

export function sortProfiles(list: AgentProfile[]): AgentProfile[] {
  return list.sort((a, b) => compareFolded(a.name, b.name) || compareCodeUnits(a.name, b.name));
}

function compareFolded(a: string, b: string): number {
  return compareCodeUnits(a.toLowerCase(), b.toLowerCase());
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
