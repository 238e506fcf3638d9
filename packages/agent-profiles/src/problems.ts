import { z } from "zod";

/**
 * Every code a configuration problem can carry. The `config_*` codes are shared by agent profile, model
 * profile and settings files (the problem's `file` tells which); the others belong to one of them or to the
 * run-time helpers (`memory_*`, `skill_*`). Each has a heading in docs/errors.md.
 */
export const CONFIG_PROBLEM_CODES = [
  "config_unreadable",
  "config_not_yaml",
  "config_not_mapping",
  "config_field_invalid",
  "config_unknown_key",
  "config_key_ignored",
  "config_template_literal",
  "profile_acp_section_reset",
  "profile_duplicate_id",
  "profile_duplicate_name",
  "profile_name_case_conflict",
  "profile_name_conflict",
  "profile_rename_failed",
  "profile_id_write_failed",
  "profile_model_missing",
  "profile_web_tool_omitted",
  "model_duplicate_id",
  "model_duplicate_name",
  "settings_not_allowed",
  "settings_default_agent_unresolved",
  "settings_active_model_unresolved",
  "memory_path_outside_cwd",
  "memory_not_text_file",
  "memory_unreadable",
  "memory_folder_limit",
  "memory_token_limit",
  "skill_invalid",
  "skill_root_unreadable",
] as const;
export const ConfigProblemCodeSchema = z.enum(CONFIG_PROBLEM_CODES);
export type ConfigProblemCode = z.infer<typeof ConfigProblemCodeSchema>;

/**
 * One problem found in a configuration file. `severity: "error"` means the thing it names (a profile, a
 * file) is not loaded; `"warning"` means it loads and the field falls back to its default.
 */
export const ConfigProblemSchema = z.object({
  code: ConfigProblemCodeSchema,
  severity: z.enum(["error", "warning"]),
  /** Absolute path of the file, or null when the problem has none (an environment variable). */
  file: z.string().nullable(),
  /** 1-based line of the offending key, or null when unknown. */
  line: z.int().min(1).nullable(),
  /** Field path such as `acp.env.API_KEY` or `tools.mcp[1].url`; null for the whole file. */
  field: z.string().nullable(),
  message: z.string(),
});
export type ConfigProblem = z.infer<typeof ConfigProblemSchema>;

/** Problems of one file, collected while it is read; the line of a field comes from `lineOf`. */
export class ProblemSink {
  readonly problems: ConfigProblem[] = [];

  constructor(
    readonly file: string | null,
    private readonly lineOf: (field: string) => number | null = () => null,
  ) {}

  add(
    code: ConfigProblemCode,
    severity: "error" | "warning",
    field: string | null,
    message: string,
    line: number | null = field === null ? null : this.lineOf(field),
  ): void {
    this.problems.push({ code, severity, file: this.file, line, field, message });
  }

  error(code: ConfigProblemCode, field: string | null, message: string): void {
    this.add(code, "error", field, message);
  }

  warn(code: ConfigProblemCode, field: string | null, message: string): void {
    this.add(code, "warning", field, message);
  }

  get failed(): boolean {
    return this.problems.some((p) => p.severity === "error");
  }
}

/** A value as people read it in a message: `123 (a number)`, `"on" (a string)`, `a list`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string")
    return `${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)} (a string)`;
  if (typeof value === "boolean") return `${value} (a boolean)`;
  if (typeof value === "number") return `${value} (a number)`;
  return typeof value;
}
