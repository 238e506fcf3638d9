import { z } from "zod";
import { DEFAULT_PIPELINE_LIMITS, type PipelineLimits } from "./limits";

/** The runtimes a node may name: `auto` runs the profile's own kind, the others an ACP agent preset. */
export const RUNTIMES = ["auto", "claude-code", "codex", "opencode", "kimi-code"] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** What a run does after a node fails (the reference's "Failure policies"). */
export const FAILURE_POLICIES = ["pause", "fail_fast", "continue"] as const;
export type FailurePolicy = (typeof FAILURE_POLICIES)[number];

/** Reasoning-effort values a node may set (the reference's list). */
export const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;

/** Permission modes a node may set; `null` inherits the launch's worker gear. */
export const PERMISSION_MODES = ["bounded", "yolo"] as const;

/**
 * A node ID: what `depends_on`, `reuse_session_of` and `{{upstream.<id>.…}}` name, so it holds no `.`,
 * braces or spaces: letters, digits, `_` and `-`, starting with a letter, digit or `_`, 1 to 64 characters.
 */
export const NODE_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;

const NodeIdSchema = z.string().regex(NODE_ID_PATTERN);

/** An optional text field: `""` means the same as `null` ("Empty" in the reference) and is stored as `null`. */
function optionalText(description: string) {
  return z
    .string()
    .nullable()
    .default(null)
    .transform((value) => (value === "" ? null : value))
    .describe(description);
}

/** An optional choice among `values`, `""` again meaning `null`. */
function optionalChoice<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  return z
    .union([z.enum(values), z.literal("")])
    .nullable()
    .default(null)
    .transform((value) => (value === "" ? null : (value as T[number])))
    .describe(description);
}

/** One node of a pipeline: the reference's "Node fields", each with its default. Unknown fields are refused. */
export const PipelineNodeSchema = z.strictObject({
  id: NodeIdSchema.describe(
    "Unique node ID, named by depends_on, reuse_session_of and {{upstream.<id>.…}}: letters, digits, _ and -.",
  ),
  name: z.string().min(1).describe("Display name."),
  profile_id: optionalText("Agent profile to apply (id or name); null for the default profile."),
  prompt_template: z
    .string()
    .min(1)
    .describe(
      "The node's start prompt: {{task}}, {{upstream.<id>.summary|json|<field>}}, {{upstream_summaries}}.",
    ),
  runtime: z
    .enum(RUNTIMES)
    .default("auto")
    .describe("auto runs the profile's own kind; the others run that ACP agent."),
  cwd: optionalText("Working directory; null for the launch's (or the profile's) default directory."),
  model: optionalText("Model override; null for the profile's or the runtime's default."),
  effort: optionalChoice(EFFORTS, "Reasoning-effort override."),
  permission_mode: optionalChoice(
    PERMISSION_MODES,
    "Permission mode; null inherits the launch's worker gear.",
  ),
  skip_permissions: z
    .boolean()
    .nullable()
    .default(null)
    .describe("Skip permission prompts; null derives it from permission_mode or the launch default."),
  isolate: z
    .boolean()
    .nullable()
    .default(null)
    .describe("Force (true) or forbid (false) a git worktree of its own; null follows the default policy."),
  depends_on: z.array(z.string()).default([]).describe("Direct upstream node IDs."),
  output_schema: z
    .record(z.string(), z.unknown())
    .nullable()
    .default(null)
    .describe(
      "JSON Schema subset of the handoff (type, properties, required, items, enum; additionalProperties as an annotation); the root is an object. null: the default schema.",
    ),
  skills: z.array(z.string().min(1)).default([]).describe("Extra local skills, merged with the profile's."),
  requires_approval: z.boolean().default(false).describe("Wait for a human approval before starting."),
  reuse_session_of: optionalText("Continue the agent session of this node, a transitive ancestor."),
});
export type PipelineNode = z.infer<typeof PipelineNodeSchema>;
export type PipelineNodeInput = z.input<typeof PipelineNodeSchema>;

/**
 * The definition schema under `limits` (its node count). `$schema` may name the JSON Schema for editors; it
 * is dropped, not stored. Lifecycle fields (`status`, `revision`, `source`, `locked`) are not part of it.
 */
export function pipelineDefinitionSchema(limits: Pick<PipelineLimits, "maxNodes"> = DEFAULT_PIPELINE_LIMITS) {
  return z
    .strictObject({
      $schema: z.string().optional().describe("The JSON Schema of this file, for editors; not stored."),
      name: z.string().min(1).describe("Pipeline name."),
      description: z.string().default("").describe("What it is for, shown to users and to the main agent."),
      nodes: z
        .array(PipelineNodeSchema)
        .min(1)
        .max(limits.maxNodes)
        .describe(`The nodes: 1 to ${limits.maxNodes}.`),
      failure_policy: z
        .enum(FAILURE_POLICIES)
        .default("pause")
        .describe("After a node fails: pause the run, fail_fast, or continue independent branches."),
      auto_supervise: z
        .boolean()
        .default(true)
        .describe(
          "Supervise the run automatically while it runs, and stop supervising once it has converged.",
        ),
    })
    .transform(({ $schema: _editorOnly, ...definition }) => definition);
}

/** The definition schema under the default limits (200 nodes). */
export const PipelineDefinitionSchema = pipelineDefinitionSchema();
export type PipelineDefinition = z.infer<typeof PipelineDefinitionSchema>;
export type PipelineDefinitionInput = z.input<typeof PipelineDefinitionSchema>;
