/**
 * @module @icode/agent-profiles
 * Agent profiles, model profiles and their settings: reading and normalizing the files, matching a
 * profile or model selector, choosing an agent node's model, and the pure policy helpers an agent loop
 * calls (approval, shell filter, MCP names, templates, retries). Loads no model or protocol SDK.
 *
 * @example
 * import { loadAgentConfig, matchProfile, selectNodeModel } from "@icode/agent-profiles";
 * const config = await loadAgentConfig({ chrysHome, cwd, env: process.env, homeDir });
 * const found = matchProfile(config, "Reviewer");
 * if (found.ok) selectNodeModel(config, { profile: found.profile, model: null, workflowDefault: null });
 * // → { ok: true, kind: "native", model: { id: "3f9c2a71b0de", … }, from: "profile", notes: [] }
 * //   or { ok: false, code: "model_unresolvable", message: "…", hint: "…", candidates: [] }
 */

export {
  ACP_PRESETS,
  type AcpPreset,
  type AcpPresetAvailability,
  AcpPresetSchema,
  acpPresetProfile,
  findAcpPresets,
  findOnPath,
} from "./acp-presets";
export { BUILTIN_AGENTS } from "./builtins";
export {
  type AgentConfig,
  type AgentProfile,
  type ConfigLocations,
  type LoadAgentConfigOptions,
  launchableAsMain,
  type ModelProfile,
  PROFILE_SOURCES,
  type ProfileSource,
} from "./config";
export { type NodeSite, selectionDiagnostic } from "./diagnostics";
export { agentProfileJsonSchema, modelProfileJsonSchema, settingsJsonSchema } from "./json-schema";
export {
  type AgentListing,
  AgentListingSchema,
  agentModelLabel,
  formatContextTokens,
  ListingProblemSchema,
  listAgents,
  listModels,
  type ModelListing,
  ModelListingSchema,
} from "./listings";
export { loadAgentConfig } from "./load";
export { unusableReason } from "./load-models";
export {
  MODEL_MATCH_STEPS,
  type ModelMatch,
  matchModel,
  matchProfile,
  PROFILE_MATCH_STEPS,
  type ProfileMatch,
  SELECTION_CODES,
  type SelectionCode,
  SelectionCodeSchema,
  type SelectionFailure,
} from "./match";
export { type NormalizationChange, NormalizationChangeSchema, newProfileId } from "./normalize";
export {
  CONFIG_PROBLEM_CODES,
  type ConfigProblem,
  type ConfigProblemCode,
  ConfigProblemSchema,
} from "./problems";
export { profileNameProblem, RECOMMENDED_PROFILE_NAME } from "./profile-name";
export {
  type AcpSettings,
  AgentProfileFileSchema,
  type Approval,
  type ApprovalLevel,
  type McpServer,
  type ShellFilter,
} from "./schema/agent-profile";
export { ModelProfileFileSchema, PROVIDERS, type Provider } from "./schema/model-profile";
export { SettingsFileSchema } from "./schema/settings";
export {
  type ModelSelection,
  type ModelSource,
  type NodeModelRequest,
  selectNodeModel,
} from "./select-model";
export { type ExplicitSettings, type ResolvedSettings, SETTINGS_ENV, type SettingSource } from "./settings";
export { type ProfileProgram, type ProfileTrust, profileTrust } from "./trust";
