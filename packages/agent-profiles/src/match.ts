import { z } from "zod";
import type { AgentProfile, ModelProfile } from "./config";

/** Codes of a failed profile or model selection; each has a heading in docs/errors.md. */
export const SELECTION_CODES = [
  /** No profile matches the selector at any step. */
  "agent_profile_missing",
  /** Several profiles match at the first step that matches any. */
  "agent_profile_ambiguous",
  /** A model selector matches nothing, matches an unusable profile, or no model is available at all. */
  "model_unresolvable",
  /** Several model profiles match at the first step that matches any. */
  "model_ambiguous",
] as const;
export const SelectionCodeSchema = z.enum(SELECTION_CODES);
export type SelectionCode = z.infer<typeof SelectionCodeSchema>;

export const SelectionFailureSchema = z.object({
  ok: z.literal(false),
  code: SelectionCodeSchema,
  message: z.string(),
  hint: z.string(),
  /** Names (and sources) of the profiles an ambiguous selector matched. */
  candidates: z.array(z.string()),
});
export type SelectionFailure = z.infer<typeof SelectionFailureSchema>;

export const PROFILE_MATCH_STEPS = [
  "id",
  "name",
  "display_name",
  "name_ignoring_case",
  "display_name_ignoring_case",
] as const;
export type ProfileMatchStep = (typeof PROFILE_MATCH_STEPS)[number];
export const MODEL_MATCH_STEPS = ["id", "name", "name_ignoring_case"] as const;
export type ModelMatchStep = (typeof MODEL_MATCH_STEPS)[number];

export type ProfileMatch = { ok: true; profile: AgentProfile; step: ProfileMatchStep } | SelectionFailure;
export type ModelMatch = { ok: true; model: ModelProfile; step: ModelMatchStep } | SelectionFailure;

const STEP_WORDS: Record<ProfileMatchStep, string> = {
  id: "id",
  name: "name",
  display_name: "display name",
  name_ignoring_case: "name ignoring case",
  display_name_ignoring_case: "display name ignoring case",
};

/**
 * Finds the agent profile a selector (`agent(profile=…)`, `agent.default_profile`) means: by id, exact
 * name, exact display name, name ignoring case, display name ignoring case. The first step with any match
 * decides: one match selects it, several are `agent_profile_ambiguous`; no match at all is
 * `agent_profile_missing`.
 */
export function matchProfile(config: { profiles: readonly AgentProfile[] }, selector: string): ProfileMatch {
  const fold = selector.toLowerCase();
  const tests: Record<ProfileMatchStep, (p: AgentProfile) => boolean> = {
    id: (p) => p.id !== null && p.id === selector,
    name: (p) => p.name === selector,
    display_name: (p) => p.display_name !== "" && p.display_name === selector,
    name_ignoring_case: (p) => p.name.toLowerCase() === fold,
    display_name_ignoring_case: (p) => p.display_name !== "" && p.display_name.toLowerCase() === fold,
  };
  for (const step of PROFILE_MATCH_STEPS) {
    const found = config.profiles.filter(tests[step]);
    if (found.length === 1) return { ok: true, profile: found[0] as AgentProfile, step };
    if (found.length > 1) {
      const candidates = found.map(
        (p) =>
          `${p.name} (${p.source}${p.file === null ? "" : `, ${p.file}`}${p.id === null ? "" : `, id ${p.id}`})`,
      );
      return {
        ok: false,
        code: "agent_profile_ambiguous",
        message: `profile "${selector}" matches ${found.length} agent profiles by ${STEP_WORDS[step]}: ${candidates.join("; ")}`,
        hint: "select the profile by its id (icode agents lists them), or rename one of the profiles",
        candidates,
      };
    }
  }
  return {
    ok: false,
    code: "agent_profile_missing",
    message: `no agent profile matches "${selector}" by id, name or display name`,
    hint: "icode agents lists the profiles available here; profiles live in ~/.chrys/agents/ and .chrys/agents/",
    candidates: [],
  };
}

/**
 * Finds the model profile a selector (`--model`, `agent(model=…)`, `model.profile.active`) means: by exact
 * id, exact name, name ignoring case. Several matches at the deciding step are `model_ambiguous`; nothing,
 * or an unusable profile, is `model_unresolvable`.
 */
export function matchModel(config: { models: readonly ModelProfile[] }, selector: string): ModelMatch {
  const fold = selector.toLowerCase();
  const tests: Record<ModelMatchStep, (m: ModelProfile) => boolean> = {
    id: (m) => m.id === selector,
    name: (m) => m.name === selector,
    name_ignoring_case: (m) => m.name.toLowerCase() === fold,
  };
  for (const step of MODEL_MATCH_STEPS) {
    const found = config.models.filter(tests[step]);
    if (found.length > 1) {
      const candidates = found.map((m) => `${m.name} (id ${m.id}, ${m.file})`);
      return {
        ok: false,
        code: "model_ambiguous",
        message: `model "${selector}" matches ${found.length} model profiles by ${step === "name_ignoring_case" ? "name ignoring case" : step}: ${candidates.join("; ")}`,
        hint: "select the model by its id (icode models lists them), or rename one of the profiles",
        candidates,
      };
    }
    const model = found[0];
    if (model === undefined) continue;
    if (!model.usable) {
      return {
        ok: false,
        code: "model_unresolvable",
        message: `model profile "${model.name}" (id ${model.id}) is not usable: ${model.unusableReason}`,
        hint: `fix ${model.file}, or choose another model (icode models lists them)`,
        candidates: [],
      };
    }
    return { ok: true, model, step };
  }
  return {
    ok: false,
    code: "model_unresolvable",
    message: `no model profile matches "${selector}" by id or name`,
    hint: "icode models lists the model profiles; add one as ~/.chrys/models/<id>.yaml",
    candidates: [],
  };
}
