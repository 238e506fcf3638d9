import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import {
  ACP_PRESETS,
  type AgentConfig,
  type AgentProfile,
  acpPresetProfile,
  type ModelProfile,
  matchProfile,
  selectNodeModel,
} from "@icode/agent-profiles";
import type { ApprovalMode } from "@icode/agent-profiles/policy";
import type { LaunchPermissionMode, PipelineNode, Runtime } from "@icode/pipelines";
import { NodeFailure, type PipelineNodeWarningCode } from "./codes";

/** The ACP preset each preset runtime names (`ACP_PRESETS` of `@icode/agent-profiles`, by profile name). */
export const RUNTIME_PRESETS: Readonly<Record<Exclude<Runtime, "auto">, string>> = {
  "claude-code": "Claude",
  codex: "Codex",
  opencode: "OpenCode",
  "kimi-code": "Kimi",
};

/** How a node runs, everything resolved. */
export type ResolvedNode = {
  readonly profile: AgentProfile;
  readonly cwd: string;
  readonly approvalMode: ApprovalMode;
  readonly effort: string | null;
  readonly warnings: readonly { code: PipelineNodeWarningCode; message: string }[];
} & (
  | { readonly runtime: "native"; readonly model: ModelProfile }
  | { readonly runtime: "acp"; readonly modelId: string | null }
);

/**
 * The approval mode a node's attempt runs under (docs/pipelines.md, "Running a node"): the gear is
 * `permission_mode`, else the launch's; `skip_permissions` is the node's, else `true` exactly for `yolo`.
 * Skipping is approval mode `bypass` (every call runs); not skipping is `manual`: the profile's approval
 * rules decide, and a call that needs approval goes to the executor's `approve` callback (refused without).
 */
export function nodeApprovalMode(
  node: Pick<PipelineNode, "permission_mode" | "skip_permissions">,
  launch: LaunchPermissionMode,
): ApprovalMode {
  const gear = node.permission_mode ?? launch;
  const skip = node.skip_permissions ?? gear === "yolo";
  return skip ? "bypass" : "manual";
}

/** The node's working directory: `cwd` (relative → against the launch's), else the launch's; it must exist. */
export function nodeCwd(node: Pick<PipelineNode, "cwd">, launchCwd: string): string {
  const cwd = node.cwd === null ? launchCwd : isAbsolute(node.cwd) ? node.cwd : resolve(launchCwd, node.cwd);
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    throw new NodeFailure(
      "pipeline_node_cwd_invalid",
      `the working directory of node cwd ${JSON.stringify(node.cwd ?? launchCwd)} (${cwd}) does not exist or is not a directory`,
    );
  }
  return cwd;
}

function profileOf(config: AgentConfig, selector: string | null): AgentProfile {
  if (selector === null) {
    if (config.defaultProfile === null) {
      throw new NodeFailure(
        "pipeline_node_profile_unresolved",
        "the node names no profile_id and there is no default agent (agent.default_profile, Code, or a main agent)",
      );
    }
    return config.defaultProfile;
  }
  const found = matchProfile(config, selector);
  if (!found.ok)
    throw new NodeFailure("pipeline_node_profile_unresolved", `${found.message} (${found.hint})`);
  return found.profile;
}

/**
 * The runtime's profile: `auto` → the node's profile (`profile_id` by the matching rules, null → the
 * default agent), run on its own kind. A preset runtime → the ACP agent of that preset: a configured ACP
 * profile of the preset's name (which hides the built-in one), else the built-in preset; a `profile_id`
 * then lends it its approval rules.
 */
function runtimeProfile(config: AgentConfig, node: PipelineNode): AgentProfile {
  if (node.runtime === "auto") return profileOf(config, node.profile_id);
  const name = RUNTIME_PRESETS[node.runtime];
  const preset = ACP_PRESETS.find((p) => p.name === name);
  if (preset === undefined) {
    throw new NodeFailure("pipeline_node_profile_unresolved", `no ACP preset named ${name}`);
  }
  const configured = config.profiles.find((p) => p.name === name && p.kind === "acp");
  const base = configured ?? acpPresetProfile(preset);
  if (node.profile_id === null) return base;
  const lender = profileOf(config, node.profile_id);
  return { ...base, approval: lender.approval };
}

/** Anthropic extended-thinking budgets by effort (capped below the model profile's `max_output_tokens`). */
const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<string, number>> = {
  low: 1024,
  medium: 4096,
  high: 16_000,
  xhigh: 32_000,
  max: 64_000,
};

/**
 * Effort on the native loop, as request fields merged into the model profile's `chat_options`: OpenAI-style
 * providers take `reasoning_effort` (`xhigh` and `max` → `high`; the Responses API: `reasoning.effort`),
 * Anthropic takes extended thinking with a token budget. Null when the provider has no mapping.
 */
export function nativeEffortOptions(model: ModelProfile, effort: string): Record<string, unknown> | null {
  const level = effort === "low" || effort === "medium" ? effort : "high";
  if (model.provider === "anthropic") {
    const wanted = ANTHROPIC_THINKING_BUDGETS[effort];
    // The budget must stay below the reply's token cap, and Anthropic's least budget is 1024.
    const budget = wanted === undefined ? undefined : Math.min(wanted, model.max_output_tokens - 1);
    return budget === undefined || budget < 1024
      ? null
      : { thinking: { type: "enabled", budget_tokens: budget } };
  }
  if (model.api_style === "responses") return { reasoning: { effort: level } };
  if (
    model.provider === "openai" ||
    model.provider === "deepseek-openai" ||
    model.provider === "glm-openai"
  ) {
    return { reasoning_effort: level };
  }
  return null;
}

/** Resolves runtime, profile, model, directory, approval mode, effort and skills of one node attempt. */
export function resolveNode(options: {
  config: AgentConfig;
  node: PipelineNode;
  launchCwd: string;
  launchPermissionMode: LaunchPermissionMode;
}): ResolvedNode {
  const { config, node } = options;
  const cwd = nodeCwd(node, options.launchCwd);
  const found = runtimeProfile(config, node);
  const warnings: { code: PipelineNodeWarningCode; message: string }[] = [];
  const approvalMode = nodeApprovalMode(node, options.launchPermissionMode);
  const selection = selectNodeModel(config, { profile: found, model: node.model, workflowDefault: null });
  if (!selection.ok) {
    throw new NodeFailure(
      "pipeline_node_model_unresolved",
      `${selection.message}${selection.hint ? ` (${selection.hint})` : ""}`,
    );
  }
  if (selection.kind === "acp") {
    if (node.skills.length > 0) {
      warnings.push({
        code: "pipeline_node_skills_not_applied",
        message: `skills ${node.skills.join(", ")} are not given to the ACP agent "${found.name}": an ACP agent loads skills its own way`,
      });
    }
    return {
      runtime: "acp",
      profile: found,
      modelId: selection.modelId,
      cwd,
      approvalMode,
      effort: node.effort,
      warnings,
    };
  }
  let model = selection.model;
  if (node.effort !== null) {
    const extra = nativeEffortOptions(model, node.effort);
    if (extra === null) {
      warnings.push({
        code: "pipeline_node_effort_unsupported",
        message: `model profile "${model.name}" (provider ${model.provider}) has no reasoning-effort mapping; effort "${node.effort}" is not applied`,
      });
    } else model = { ...model, chat_options: { ...model.chat_options, ...extra } };
  }
  const profile: AgentProfile =
    node.skills.length === 0
      ? found
      : {
          ...found,
          skills: {
            ...found.skills,
            paths: [...found.skills.paths, ...node.skills.filter((s) => !found.skills.paths.includes(s))],
          },
        };
  return { runtime: "native", profile, model, cwd, approvalMode, effort: node.effort, warnings };
}
