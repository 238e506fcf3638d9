import {
  type AgentConfig,
  type AgentProfile,
  launchableAsMain,
  type ModelProfile,
  PROFILE_SOURCES,
  type ProfileSource,
} from "./config";
import { matchModel, matchProfile } from "./match";
import type { AgentFileRead } from "./read/agent-profile";
import type { Report } from "./report";
import { describeSetting, type ResolvedSettings } from "./settings";
import { effectiveWebFetch, effectiveWebSearch } from "./web-tools";

// The checks that need more than one file: they run once every profile, model and setting is loaded.

/** A skipped file whose name was readable: say which profile of that name is used instead. */
export function explainFallback(
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

export function checkIds(report: Report, profiles: AgentProfile[]): void {
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

export function checkNameCase(report: Report, profiles: AgentProfile[]): void {
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

export function checkBindings(report: Report, profiles: AgentProfile[], models: ModelProfile[]): void {
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

export function checkWebTools(report: Report, profiles: AgentProfile[], settings: ResolvedSettings): void {
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

export function resolveDefaultProfile(config: AgentConfig, report: Report): AgentProfile | null {
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

export function resolveActiveModel(config: AgentConfig, report: Report): ModelProfile | null {
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
