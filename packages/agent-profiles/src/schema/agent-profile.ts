import { z } from "zod";
import { TOOL_NAME_PREFIX_PATTERN } from "../mcp-names";
import { profileNameProblem } from "../profile-name";
import { AcceptedNoEffectSchema, ENV_NAME, NoNulStringSchema, TextOrLinesSchema } from "./common";
import { WebFetchSchema, WebSearchSchema } from "./web-tools";

// One schema per section of an agent profile file (agent-profiles.md section 2). `z.input` of each is what a
// user writes (and what the editor JSON Schema describes); `z.output` is the section after defaults. Which
// broken field is a load error and which a warning is the reader's table (read/agent-profile.ts).

export const APPROVAL_LEVELS = ["auto", "require", "skip"] as const;
const ApprovalLevelSchema = z.enum(APPROVAL_LEVELS);
export type ApprovalLevel = z.infer<typeof ApprovalLevelSchema>;

/** What omitting `approval` (or only `approval.overrides`) means. */
const DEFAULT_APPROVAL_OVERRIDES: Readonly<Record<string, ApprovalLevel>> = Object.freeze({
  shell: "require",
  "filesystem.write": "require",
  todo: "skip",
});

export const ModelBindingSchema = z.strictObject({
  profile_id: z.string().trim().default("").meta({ description: "Id of a model profile; bound by id only." }),
});

export const SHELL_FILTER_PRESETS = ["read_only", "unrestricted"] as const;

export const ShellFilterFieldsSchema = z.strictObject({
  preset: z.enum([...SHELL_FILTER_PRESETS, ""]).default(""),
  mode: z.enum(["whitelist", "blacklist"]).default("whitelist"),
  commands: z.array(z.string()).default([]),
  allow_redirections: z.boolean().default(true),
  allow_subshells: z.boolean().default(true),
});
export type ShellFilter = z.output<typeof ShellFilterFieldsSchema>;

/** `shell_filter: read_only` is `{preset: read_only}`; an unknown preset in the scalar form filters nothing. */
export const ShellFilterSchema = z.union([z.string(), ShellFilterFieldsSchema]).transform(
  (value): ShellFilter =>
    typeof value === "string"
      ? ShellFilterFieldsSchema.parse({
          preset: (SHELL_FILTER_PRESETS as readonly string[]).includes(value) ? value : "",
        })
      : value,
);

const mcpCommon = {
  name: z.string().trim().min(1),
  enabled: z.boolean().default(true),
  description: z.string().default(""),
  tool_name_prefix: z
    .string()
    .refine((p) => p === "" || TOOL_NAME_PREFIX_PATTERN.test(p), {
      message:
        "must be letters, digits, `_` and `-`, starting and ending with a letter or digit (e.g. `github`)",
    })
    .default(""),
  allowed_tools: z.array(z.string().min(1)).nullable().default(null),
  use_progressive_disclosure: z.boolean().default(false),
  always_load: z.array(z.string().min(1)).default([]),
  load_prompts: z.boolean().default(true),
  expose_instructions: z.boolean().default(true),
  /** Seconds per MCP request; unset is 30. */
  timeout: z
    .int()
    .positive()
    .nullable()
    .default(null)
    .transform((v) => v ?? 30),
  /** Result limit per call in tokens; `0` removes it; unset is 8000. */
  max_tool_result_tokens: z
    .int()
    .refine((v) => v === 0 || v >= 100, { message: "must be 0 (no limit) or at least 100" })
    .nullable()
    .default(null)
    .transform((v) => v ?? 8000),
};

export const McpStdioServerSchema = z.strictObject({
  transport: z.literal("stdio"),
  ...mcpCommon,
  command: NoNulStringSchema.min(1, "a stdio server needs `command`, the executable to start"),
  args: z.array(NoNulStringSchema).default([]),
  env: z.record(z.string().regex(ENV_NAME), NoNulStringSchema).default({}),
  encoding: z.string().nullable().default(null),
});

export const McpHttpServerSchema = z.strictObject({
  transport: z.literal("http"),
  ...mcpCommon,
  url: z.string().regex(/^https?:\/\/\S+$/u, "must be an http:// or https:// URL"),
  headers: z.record(z.string().min(1), z.string()).default({}),
  resolve_header_templates: z.boolean().default(true),
  verify_ssl: z.boolean().default(true),
  bypass_proxy: z.boolean().default(false),
  terminate_on_close: z
    .boolean()
    .nullable()
    .default(null)
    .transform((v) => v ?? true),
});

const McpServerSchema = z.discriminatedUnion("transport", [McpStdioServerSchema, McpHttpServerSchema]);
export type McpServer = z.output<typeof McpServerSchema>;

export const ToolsSchema = z.strictObject({
  builtins: z.array(z.string()).default([]),
  mcp: z.array(McpServerSchema).default([]),
  shell_filter: ShellFilterSchema.optional(),
  web_search: WebSearchSchema.optional(),
  web_fetch: WebFetchSchema.optional(),
  custom: AcceptedNoEffectSchema,
});

export const ApprovalSchema = z.strictObject({
  default: ApprovalLevelSchema.default("auto"),
  overrides: z
    .record(z.string().min(1), ApprovalLevelSchema)
    .default(() => ({ ...DEFAULT_APPROVAL_OVERRIDES }))
    .meta({
      description:
        "Tool kind, tool name, or `kind.name` → level. Omitted: shell and filesystem.write require, todo skips.",
    }),
  user_can_override: AcceptedNoEffectSchema,
});
export type Approval = z.output<typeof ApprovalSchema>;

/** Skill names: 1-64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen. */
export const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/u;

export const InlineSkillSchema = z.strictObject({
  name: z
    .string()
    .max(64)
    .regex(SKILL_NAME, "must be lowercase letters, digits and single hyphens (e.g. `release-notes`)"),
  description: z.string().min(1).max(1024),
  instructions: TextOrLinesSchema.default(""),
  resources: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        description: z.string().default(""),
        content: z.string().default(""),
      }),
    )
    .default([])
    .transform((list) => list.filter((r) => r.content !== "")),
});

export const SkillsSchema = z.strictObject({
  paths: z.array(z.string().min(1)).default([]),
  inline: z.array(InlineSkillSchema).default([]),
  script_timeout: z.int().positive().default(300),
  script_extensions: z
    .array(z.string().min(1))
    .default([".py", ".sh", ".ps1"])
    .transform((list) => list.map((e) => (e.startsWith(".") ? e : `.${e}`).toLowerCase())),
  auto_load_user_agents_skills: z.boolean().default(true),
  auto_load_cwd_agents_skills: z.boolean().default(true),
});

export const MemorySchema = z.strictObject({
  files: z.array(z.string().min(1)).default([]),
  folders: z.array(z.string().min(1)).default([]),
});

/** Keys the original no longer reads; a `reserved_context_pct` of 1 or more still turns compaction off. */
export const OBSOLETE_COMPACTION_KEYS = [
  "reserved_context_pct",
  "compaction_target_pct",
  "force_compress_pct",
] as const;

export const CompactionFieldsSchema = z.strictObject({
  last_words_template: z.string().default(""),
  last_words_max_output_tokens: z.int().positive().default(20000),
  phase4_side_call_token_budget: z
    .int()
    .min(-1, "must be -1 or null (unlimited), 0 (none) or a positive cap")
    .nullable()
    .default(-1)
    .transform((v) => v ?? -1),
  reserved_context_pct: z.number().optional().meta({ deprecated: true }),
  compaction_target_pct: z.number().optional().meta({ deprecated: true }),
  force_compress_pct: z.number().optional().meta({ deprecated: true }),
});

const CompactionSchema = CompactionFieldsSchema.transform(
  ({ reserved_context_pct, compaction_target_pct: _t, force_compress_pct: _f, ...rest }) => ({
    ...rest,
    /** False only when the obsolete `reserved_context_pct` is 1 or more. */
    enabled: !(reserved_context_pct !== undefined && reserved_context_pct >= 1),
  }),
);

const SUB_AGENT_TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;

export const SubAgentEntrySchema = z.strictObject({
  profile: z.string().trim().min(1),
  tool_name: z
    .string()
    .regex(SUB_AGENT_TOOL_NAME, "must match [A-Za-z_][A-Za-z0-9_]* (e.g. `explore_agent`)")
    .optional(),
  tool_description: z.string().optional(),
  max_concurrency: z.int().default(3),
});

export const SubAgentsSchema = z.strictObject({
  max_total_concurrency: z.int().default(3),
  agents: z.array(SubAgentEntrySchema).default([]),
});

export const ACP_RESERVED_ENV = "CHRYS_ACP_SUBAGENT_DEPTH";

export const AcpSchema = z.strictObject({
  command: NoNulStringSchema.default(""),
  args: z.array(NoNulStringSchema).default([]),
  env: z
    .record(
      z
        .string()
        .regex(ENV_NAME, "must match [A-Za-z_][A-Za-z0-9_]*")
        .refine((k) => k.toUpperCase() !== ACP_RESERVED_ENV, `${ACP_RESERVED_ENV} is set by the engine`),
      NoNulStringSchema,
    )
    .default({}),
  cwd: NoNulStringSchema.default(""),
  allow_external_cwd: z.boolean().default(false),
  session_mode: z.string().default(""),
  model_id: z.string().default(""),
  config_options: z.record(z.string().min(1), z.union([z.string(), z.boolean()])).default({}),
  best_effort_options: z.boolean().default(false),
  result_mode: z.enum(["last_segment", "transcript"]).default("last_segment"),
  handshake_timeout_seconds: z.number().positive().default(30),
  idle_timeout_seconds: z.number().min(0).default(600),
});
export type AcpSettings = z.output<typeof AcpSchema>;

/** An agent profile file. `acp` present (even `null` or `{}`) makes it an external ACP agent. */
export const AgentProfileFileSchema = z.strictObject({
  name: z
    .string()
    .trim()
    .superRefine((name, ctx) => {
      const problem = profileNameProblem(name);
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    }),
  id: z.string().trim().nullable().optional(),
  display_name: z.string().default(""),
  description: z.string().default(""),
  sub_agent_only: z.boolean().default(false),
  instructions: TextOrLinesSchema.default(""),
  model: ModelBindingSchema.prefault({}),
  tools: ToolsSchema.prefault({}),
  approval: ApprovalSchema.prefault({}),
  skills: SkillsSchema.prefault({}),
  memory: MemorySchema.prefault({}),
  compaction: CompactionSchema.prefault({}),
  sub_agents: SubAgentsSchema.prefault({}),
  acp: AcpSchema.nullable()
    .transform((v) => v ?? AcpSchema.parse({}))
    .optional(),
  metadata: AcceptedNoEffectSchema,
});
export type AgentProfileFile = z.input<typeof AgentProfileFileSchema>;
export type AgentProfileSettings = z.output<typeof AgentProfileFileSchema>;
