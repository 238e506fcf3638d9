import { dirname } from "node:path";
import { z } from "zod";
import type { AgentConfig, AgentProfile } from "./config";
import { isProvider, PROVIDERS } from "./schema/model-profile";

/** A problem as `--json` listings carry it (agent-profiles.md 5). */
export const ListingProblemSchema = z.object({
  file: z.string().nullable(),
  line: z.int().min(1).nullable(),
  field: z.string().nullable(),
  message: z.string(),
});

export const AgentListingEntrySchema = z.object({
  id: z.string(),
  name: z.string(),
  displayName: z.string(),
  description: z.string(),
  default: z.boolean(),
  /** `active`, the bound model profile's name, `missing:<id>`, `acp`, or `acp:<model_id>`. */
  model: z.string(),
  source: z.enum(["builtin", "user", "project"]),
  file: z.string().nullable(),
  kind: z.enum(["native", "acp"]),
  subAgentOnly: z.boolean(),
  launchableAsMain: z.boolean(),
});

/** `icode agents --json`. */
export const AgentListingSchema = z.object({
  agents: z.array(AgentListingEntrySchema),
  /** Name of the default agent, or "" when none resolves. */
  default: z.string(),
  problems: z.array(ListingProblemSchema),
});
export type AgentListing = z.infer<typeof AgentListingSchema>;

export const ModelListingEntrySchema = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.string(),
  apiStyle: z.enum(["chat_completions", "responses"]),
  modelId: z.string(),
  /** The endpoint requests go to: `base_url`, or the provider's default when that is empty. */
  baseUrl: z.string(),
  maxContextTokens: z.int(),
  maxOutputTokens: z.int(),
  stream: z.boolean(),
  vision: z.boolean(),
  usable: z.boolean(),
  active: z.boolean(),
  file: z.string(),
});

/** `icode models --json`. Never carries an API key. */
export const ModelListingSchema = z.object({
  models: z.array(ModelListingEntrySchema),
  /** Id of the active model, or "" when `model.profile.active` resolves to none. */
  active: z.string(),
  problems: z.array(ListingProblemSchema),
});
export type ModelListing = z.infer<typeof ModelListingSchema>;

/** `icode agents`: the effective profiles sorted by name ignoring case. */
export function listAgents(config: AgentConfig): AgentListing {
  return {
    agents: config.profiles.map((p) => ({
      id: p.id ?? "",
      name: p.name,
      displayName: p.display_name,
      description: p.description,
      default: config.defaultProfile === p,
      model: agentModelLabel(config, p),
      source: p.source,
      file: p.file,
      kind: p.kind,
      subAgentOnly: p.sub_agent_only,
      launchableAsMain: p.kind === "native" && !p.sub_agent_only,
    })),
    default: config.defaultProfile?.name ?? "",
    problems: problemsOf(config, "models"),
  };
}

/** `icode models`: every loaded model profile, sorted by name ignoring case, then id. */
export function listModels(config: AgentConfig): ModelListing {
  return {
    models: config.models.map((m) => ({
      id: m.id,
      name: m.name,
      provider: m.provider,
      apiStyle: m.api_style,
      modelId: m.model_id,
      baseUrl: m.base_url !== "" ? m.base_url : isProvider(m.provider) ? PROVIDERS[m.provider].baseUrl : "",
      maxContextTokens: m.max_context_tokens,
      maxOutputTokens: m.max_output_tokens,
      stream: m.stream,
      vision: m.vision,
      usable: m.usable,
      active: config.activeModel === m,
      file: m.file,
    })),
    active: config.activeModel?.id ?? "",
    problems: problemsOf(config, "agents"),
  };
}

/** The `Model` column of `icode agents`. */
export function agentModelLabel(config: Pick<AgentConfig, "models">, p: AgentProfile): string {
  if (p.kind === "acp") return p.acp?.model_id ? `acp:${p.acp.model_id}` : "acp";
  const id = p.model.profile_id;
  if (id === "") return "active";
  return config.models.find((m) => m.id === id)?.name ?? `missing:${id}`;
}

/** The `Context` column of `icode models`: `200k` for whole thousands, `1m` for whole millions. */
export function formatContextTokens(tokens: number): string {
  if (tokens > 0 && tokens % 1_000_000 === 0) return `${tokens / 1_000_000}m`;
  if (tokens > 0 && tokens % 1_000 === 0) return `${tokens / 1_000}k`;
  return String(tokens);
}

/** The problems a listing shows: all but those of the other kind of profile file. */
function problemsOf(config: AgentConfig, other: "agents" | "models"): z.infer<typeof ListingProblemSchema>[] {
  const otherDir = other === "models" ? config.locations.models : config.locations.userAgents;
  const otherProject = other === "agents" ? config.locations.projectAgents : null;
  return config.problems
    .filter(
      (p) =>
        p.file === null ||
        (dirname(p.file) !== otherDir &&
          dirname(p.file) !== otherProject &&
          p.file !== otherDir &&
          p.file !== otherProject),
    )
    .map(({ file, line, field, message }) => ({ file, line, field, message }));
}
