import type { AgentConfig, AgentProfile, ModelProfile } from "./config";
import { matchModel, type SelectionFailure } from "./match";
import { describeSetting } from "./settings";

/** Where the model of an agent node came from, in the workflow reference's priority order. */
export type ModelSource = "node" | "profile" | "workflow" | "settings";

export type ModelSelection =
  | {
      ok: true;
      kind: "native";
      model: ModelProfile;
      from: ModelSource;
      /** Why higher choices did not apply (a bound model that does not exist). */
      notes: string[];
    }
  | {
      ok: true;
      kind: "acp";
      /** The model id to request from the ACP agent, or null to keep the agent's default. */
      modelId: string | null;
      /** The model profile named by `agent(model=…)`; only its `model_id` is used. */
      model: ModelProfile | null;
      from: "node" | "profile";
      notes: string[];
    }
  | SelectionFailure;

export interface NodeModelRequest {
  profile: AgentProfile;
  /** `agent(model=…)`, or null when omitted. */
  model: string | null;
  /** The workflow session's saved model selection, or null when none was chosen. */
  workflowDefault: string | null;
}

/**
 * Chooses the model of an agent node (workflow reference, "Model selection"). Native profiles:
 * `agent(model=)`, then the profile's `model.profile_id` (by id only; a bound model that does not exist or
 * cannot be used falls back), then the workflow default, then `model.profile.active`. An explicit choice
 * that does not resolve is an error; so is having no model at all ("the workflow cannot start without an
 * available model"). ACP profiles: an omitted `model` keeps the profile's `acp.model_id` (never the
 * workflow default); an explicit one asks the agent for that model profile's `model_id`.
 */
export function selectNodeModel(
  config: Pick<AgentConfig, "models" | "settings">,
  request: NodeModelRequest,
): ModelSelection {
  const { profile } = request;
  if (profile.kind === "acp") {
    if (request.model === null) {
      const id = profile.acp?.model_id ?? "";
      return {
        ok: true,
        kind: "acp",
        modelId: id === "" ? null : id,
        model: null,
        from: "profile",
        notes: [],
      };
    }
    const found = matchModel(config, request.model);
    if (!found.ok) return explicitFailure(found, `agent(model=${JSON.stringify(request.model)})`);
    const id = found.model.model_id;
    return {
      ok: true,
      kind: "acp",
      modelId: id === "" ? null : id,
      model: found.model,
      from: "node",
      notes: [],
    };
  }

  if (request.model !== null) {
    const found = matchModel(config, request.model);
    if (!found.ok) return explicitFailure(found, `agent(model=${JSON.stringify(request.model)})`);
    return { ok: true, kind: "native", model: found.model, from: "node", notes: [] };
  }

  const notes: string[] = [];
  const bound = profile.model.profile_id;
  if (bound !== "") {
    const byId = config.models.filter((m) => m.id === bound);
    if (byId.length > 1) {
      return {
        ok: false,
        code: "model_ambiguous",
        message: `profile "${profile.name}" binds model id "${bound}", which ${byId.length} model profiles have: ${byId.map((m) => m.file).join(", ")}`,
        hint: "give one of those model profiles a new id",
        candidates: byId.map((m) => `${m.name} (id ${m.id}, ${m.file})`),
      };
    }
    const model = byId[0];
    if (model?.usable) return { ok: true, kind: "native", model, from: "profile", notes };
    notes.push(
      model === undefined
        ? `profile "${profile.name}" binds model id "${bound}", which no model profile has`
        : `profile "${profile.name}" binds model "${model.name}", which is not usable: ${model.unusableReason}`,
    );
  }

  if (request.workflowDefault !== null) {
    const found = matchModel(config, request.workflowDefault);
    if (!found.ok)
      return explicitFailure(
        found,
        `the workflow's default model ${JSON.stringify(request.workflowDefault)}`,
      );
    return { ok: true, kind: "native", model: found.model, from: "workflow", notes };
  }

  const active = config.settings.activeModel;
  const setting = describeSetting("model.profile.active", active);
  if (active.value === null) {
    return {
      ok: false,
      code: "model_unresolvable",
      message: `agent profile "${profile.name}" has no model: no agent(model=), ${bound === "" ? "no model.profile_id" : "its bound model cannot be used"}, no workflow default, and ${setting}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`,
      hint: "set model.profile.active in ~/.chrys/settings.yaml (or CHRYS_MODEL_PROFILE) to a model profile, or pass model= to agent()",
      candidates: [],
    };
  }
  const found = matchModel(config, active.value);
  if (!found.ok) {
    return {
      ...found,
      code: found.code === "model_ambiguous" ? "model_ambiguous" : "model_unresolvable",
      message: `the default model does not resolve: ${setting} is "${active.value}": ${found.message}`,
      hint: "set model.profile.active to the id or name of a usable model profile (icode models lists them), or pass model= to agent()",
    };
  }
  return { ok: true, kind: "native", model: found.model, from: "settings", notes };
}

function explicitFailure(found: SelectionFailure, what: string): SelectionFailure {
  return { ...found, message: `${what}: ${found.message}` };
}
