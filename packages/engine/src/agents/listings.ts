import { homedir } from "node:os";
import { resolve } from "node:path";
import {
  type AgentListing,
  listAgents,
  listModels,
  loadAgentConfig,
  type ModelListing,
} from "@icode/agent-profiles";
import { configDir } from "@icode/workflow-discovery";
import type { EngineOptions } from "../context";

export type { AgentListing, ModelListing } from "@icode/agent-profiles";
// `icode agents` / `icode models` (agent-profiles.md 5) are one process per call: this file imports only the
// profile package (no model or protocol SDK, no records, no Python bridge), so a front end that lists
// profiles loads none of what running an agent needs.
export { AgentListingSchema, formatContextTokens, ModelListingSchema } from "@icode/agent-profiles";

/** What listing needs of the engine's options. */
export type ListProfilesOptions = Pick<EngineOptions, "cwd" | "env" | "chrysHome" | "homeDir">;

async function loadFor(options: ListProfilesOptions) {
  const home = options.homeDir ?? homedir();
  return loadAgentConfig({
    chrysHome: resolve(options.chrysHome ?? configDir(options.env, home, process.platform)),
    cwd: resolve(options.cwd),
    env: options.env,
    homeDir: home,
  });
}

/**
 * `icode agents`: the effective agent profiles (built-in, user, and the project's `.chrys/agents/` in `cwd`),
 * one per name after hiding, sorted by name ignoring case, the default marked, with every load problem of
 * the agent profile and settings files (file, line, field, message). Loading puts user profile files into
 * canonical form, as every start does (agent-profiles.md 1.4).
 */
export async function listAgentsFor(options: ListProfilesOptions): Promise<AgentListing> {
  return listAgents(await loadFor(options));
}

/**
 * `icode models`: every loaded model profile sorted by name ignoring case, then id, the one
 * `model.profile.active` resolves to marked, with the load problems of the model and settings files. Never
 * carries an API key.
 */
export async function listModelsFor(options: ListProfilesOptions): Promise<ModelListing> {
  return listModels(await loadFor(options));
}
