import { basename, isAbsolute, join } from "node:path";
import { WorkflowError } from "@icode/workflow-errors";
import { acpPresetProfile, findAcpPresets } from "./acp-presets";
import { BUILTIN_AGENTS } from "./builtins";
import type {
  AgentConfig,
  AgentProfile,
  ConfigLocations,
  LoadAgentConfigOptions,
  ProfileSource,
} from "./config";
import { sortProfiles } from "./config";
import { listProfileFiles, readConfigFile, sha256 } from "./files";
import {
  checkBindings,
  checkIds,
  checkNameCase,
  checkWebTools,
  explainFallback,
  resolveActiveModel,
  resolveDefaultProfile,
} from "./load-checks";
import { loadModels } from "./load-models";
import { loadSettings } from "./load-settings";
import { normalizeUserFiles, type UserFile } from "./normalize";
import { type AgentFileRead, readAgentProfile } from "./read/agent-profile";
import { byLine, Report } from "./report";
import type { AgentProfileSettings } from "./schema/agent-profile";

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
  // The external coding agents we know how to start over ACP join the built-ins when their command is on
  // PATH (`acp-presets.ts`); a user or project profile of the same name hides them as it hides the others.
  if (options.acpPresets !== false) {
    for (const { preset, path } of await findAcpPresets(options.env)) {
      if (path !== null) builtin.push(acpPresetProfile(preset));
    }
  }
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
