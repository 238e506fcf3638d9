import { z } from "zod";
import { type ConfigProblem, ProblemSink } from "./problems";
import { WebFetchSchema, WebSearchSchema } from "./schema/web-tools";

export const SETTING_SOURCES = ["explicit", "env", "project", "user", "default"] as const;
export const SettingSourceSchema = z.enum(SETTING_SOURCES);
export type SettingSource = z.infer<typeof SettingSourceSchema>;

/** Where a resolved value came from: the source and the file or variable that holds it. */
function setting<T extends z.ZodType>(value: T) {
  return z.object({ value, source: SettingSourceSchema, origin: z.string().nullable() });
}

/** The settings of agent-profiles.md 4.3 after the five sources are merged. */
export const ResolvedSettingsSchema = z.object({
  /** `agent.default_profile` (`CHRYS_DEFAULT_AGENT`), default `Code`: a profile selector. */
  defaultProfile: setting(z.string()),
  /** `model.profile.active` (`CHRYS_MODEL_PROFILE`): a model selector, or null when unset. */
  activeModel: setting(z.string().nullable()),
  /** `llm.retry.max_transient` (`CHRYS_MAX_TRANSIENT_RETRIES`): null means 18 for CLI runs, 10 otherwise. */
  maxTransient: setting(z.int().min(0).nullable()),
  /** User settings only. */
  projectConfigEnabled: z.boolean(),
  projectSkillsEnabled: z.boolean(),
  /** `tools.web_search.*` / `tools.web_fetch.*` of the user settings (profiles override them). */
  webSearch: z.custom<z.output<typeof WebSearchSchema>>(),
  webFetch: z.custom<z.output<typeof WebFetchSchema>>(),
});
export type ResolvedSettings = z.infer<typeof ResolvedSettingsSchema>;

/** Explicit choices of the command or session: they win over every file and variable. */
export interface ExplicitSettings {
  defaultProfile?: string;
  activeModel?: string;
  maxTransient?: number | null;
}

export const SETTINGS_ENV = {
  defaultProfile: "CHRYS_DEFAULT_AGENT",
  activeModel: "CHRYS_MODEL_PROFILE",
  maxTransient: "CHRYS_MAX_TRANSIENT_RETRIES",
} as const;

/** The lowest default of `llm.retry.max_transient` (interactive and server modes). */
const LOWEST_DEFAULT_RETRIES = 10;

interface FileValues {
  file: string;
  values: Record<string, unknown>;
  lineOf?: (field: string) => number | null;
}

/**
 * Merges explicit choices, environment variables, project settings, user settings and defaults: each key
 * takes the first valid value. Invalid environment values are reported and skipped.
 */
export function resolveSettings(input: {
  explicit?: ExplicitSettings;
  env: Readonly<Record<string, string | undefined>>;
  user: FileValues | null;
  project: FileValues | null;
}): { settings: ResolvedSettings; problems: ConfigProblem[] } {
  const sink = new ProblemSink(null);
  const get = (fv: FileValues | null, path: string[]): unknown => {
    let v: unknown = fv?.values;
    for (const p of path)
      v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[p] : undefined;
    return v;
  };
  const env = (name: string): string | undefined => {
    const v = input.env[name];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };

  const pickString = (key: "defaultProfile" | "activeModel", path: string[]) => {
    const explicit = input.explicit?.[key];
    if (explicit !== undefined && explicit.trim() !== "")
      return { value: explicit.trim(), source: "explicit" as const, origin: null };
    const e = env(SETTINGS_ENV[key]);
    if (e !== undefined) return { value: e, source: "env" as const, origin: SETTINGS_ENV[key] };
    const u = get(input.user, path);
    if (typeof u === "string")
      return { value: u.trim(), source: "user" as const, origin: input.user?.file ?? null };
    return null;
  };

  const defaultProfile = pickString("defaultProfile", ["agent", "default_profile"]) ?? {
    value: "Code",
    source: "default" as const,
    origin: null,
  };
  const activeModel = pickString("activeModel", ["model", "profile", "active"]) ?? {
    value: null,
    source: "default" as const,
    origin: null,
  };

  const userRetries = get(input.user, ["llm", "retry", "max_transient"]) as number | null | undefined;
  let maxTransient: ResolvedSettings["maxTransient"] = { value: null, source: "default", origin: null };
  if (userRetries !== undefined)
    maxTransient = { value: userRetries, source: "user", origin: input.user?.file ?? null };
  const projectRetries = get(input.project, ["llm", "retry", "max_transient"]) as number | null | undefined;
  if (projectRetries !== undefined && projectRetries !== null) {
    const limit = userRetries ?? LOWEST_DEFAULT_RETRIES;
    if (projectRetries <= limit)
      maxTransient = { value: projectRetries, source: "project", origin: input.project?.file ?? null };
    else {
      const p = new ProblemSink(input.project?.file ?? null, input.project?.lineOf);
      p.warn(
        "settings_not_allowed",
        "llm.retry.max_transient",
        `project settings may lower llm.retry.max_transient but not raise it: ${projectRetries} is above ${userRetries === undefined || userRetries === null ? `${LOWEST_DEFAULT_RETRIES} (the lowest default)` : `the user's ${userRetries}`}; it is ignored`,
      );
      sink.problems.push(...p.problems);
    }
  }
  const envRetries = env(SETTINGS_ENV.maxTransient);
  if (envRetries !== undefined) {
    if (/^\d+$/u.test(envRetries))
      maxTransient = { value: Number(envRetries), source: "env", origin: SETTINGS_ENV.maxTransient };
    else
      sink.warn(
        "config_field_invalid",
        "llm.retry.max_transient",
        `${SETTINGS_ENV.maxTransient}=${JSON.stringify(envRetries)} is not a whole number 0 or more; it is ignored`,
      );
  }
  if (input.explicit?.maxTransient !== undefined)
    maxTransient = { value: input.explicit.maxTransient, source: "explicit", origin: null };

  const bool = (path: string[]) => get(input.user, path) === true;
  const settings: ResolvedSettings = {
    defaultProfile,
    activeModel,
    maxTransient,
    projectConfigEnabled: bool(["project", "config_enabled"]),
    projectSkillsEnabled: bool(["project", "skills_enabled"]),
    webSearch: WebSearchSchema.parse(get(input.user, ["tools", "web_search"]) ?? {}),
    webFetch: WebFetchSchema.parse(get(input.user, ["tools", "web_fetch"]) ?? {}),
  };
  return { settings, problems: sink.problems };
}

/** How a setting is named in messages: `model.profile.active (from CHRYS_MODEL_PROFILE)`. */
export function describeSetting(key: string, s: { source: SettingSource; origin: string | null }): string {
  if (s.source === "env") return `${key} (from the environment variable ${s.origin})`;
  if (s.source === "user" || s.source === "project") return `${key} (from ${s.origin})`;
  if (s.source === "explicit") return `${key} (chosen for this command or session)`;
  return `${key} (not set)`;
}
