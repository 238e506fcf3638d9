import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentConfig, AgentProfile, ModelSelection, ProfileTrust } from "@icode/agent-profiles";
import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import type { AgentNode, Definition } from "@icode/workflow-graph";

/** An agent node with the profile and model it will run with. */
export interface BoundAgent {
  readonly node: AgentNode;
  readonly profile: AgentProfile;
  readonly selection: Extract<ModelSelection, { ok: true }>;
}

/** The agent nodes of a Definition, bound to this computer's profiles and models (or why not). */
export interface AgentBindings {
  readonly config: AgentConfig;
  readonly agents: ReadonlyMap<string, BoundAgent>;
  /** Project profiles the agents use that start programs: part of the run's trust subject. */
  readonly trusted: readonly ProfileTrust[];
  readonly diagnostics: readonly Diagnostic[];
}

export interface BindOptions {
  readonly chrysHome: string;
  /** The workspace: project profiles and settings are read from its `.chrys/`. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  /** The workflow's default model (saved with the session, or asked for with a new one), or `null`. */
  readonly workflowDefault: string | null;
}

/**
 * The `bindings` stage: every agent node's profile and model must be available on this computer (workflow
 * reference, "Agent profile matching" and "Model selection"), reported at the node's declaration. A Definition
 * without agent nodes reads no profile file. The profile package is loaded only then, so listing, and
 * validating a workflow of Python nodes, load none of it.
 */
export async function bindAgents(
  definition: Definition,
  options: BindOptions,
): Promise<AgentBindings | null> {
  const nodes = definition.nodes.filter((n): n is AgentNode => n.kind === "agent");
  if (nodes.length === 0) return null;
  const profiles = await import("@icode/agent-profiles");
  const config = await profiles.loadAgentConfig({
    chrysHome: options.chrysHome,
    cwd: options.cwd,
    env: options.env,
    homeDir: options.homeDir,
  });
  const diagnostics: Diagnostic[] = [];
  const agents = new Map<string, BoundAgent>();
  const used = new Map<string, AgentProfile>();
  for (const node of nodes) {
    const site = {
      node: node.id,
      file: node.site?.file ?? null,
      line: node.site?.line ?? null,
      column: node.site?.column ?? null,
      end_line: node.site?.end_line ?? null,
      end_column: node.site?.end_column ?? null,
    };
    const found = profiles.matchProfile(config, node.profile);
    if (!found.ok) {
      diagnostics.push(profiles.selectionDiagnostic(found, site));
      continue;
    }
    const selection = profiles.selectNodeModel(config, {
      profile: found.profile,
      model: node.model,
      workflowDefault: options.workflowDefault,
    });
    if (!selection.ok) {
      diagnostics.push(profiles.selectionDiagnostic(selection, site));
      continue;
    }
    if (selection.kind === "native" && selection.model.api_style === "responses") {
      diagnostics.push(
        diagnostic({
          code: "model_unresolvable",
          stage: "bindings",
          message: `agent node '${node.id}': model profile '${selection.model.name}' uses api_style "responses", which this engine does not speak yet`,
          hint: "use api_style: chat_completions (every OpenAI-compatible server offers it)",
          ...site,
        }),
      );
      continue;
    }
    agents.set(node.id, { node, profile: found.profile, selection });
    used.set(found.profile.name, found.profile);
  }
  const trusted: ProfileTrust[] = [];
  for (const profile of used.values()) {
    if (profile.source !== "project") continue;
    const trust = await profiles.profileTrust(profile, {
      cwd: options.cwd,
      chrysHome: options.chrysHome,
      homeDir: options.homeDir,
      settings: config.settings,
    });
    if (trust.requiresTrust) trusted.push(trust);
  }
  return { config, agents, trusted, diagnostics };
}

/**
 * What trust covers of the agent profiles a run uses: the project profiles that start programs, by name and
 * file digest. `null` when there are none (the record then needs no such part).
 */
export function profilesDigestOf(
  trusted: readonly ProfileTrust[],
  sha256Hex: (text: string) => string,
): string | null {
  if (trusted.length === 0) return null;
  const parts = trusted.map((t) => `${t.name}\u0000${t.file ?? ""}\u0000${t.digest ?? ""}`).sort();
  return sha256Hex(parts.join("\n"));
}

/**
 * The project's agent profiles (`<workspace>/.chrys/agents/`) that start programs, whether or not a given
 * workflow uses them: what a trust refusal can name before any workflow code has run. Reads nothing when the
 * project has no such folder.
 */
export async function projectProfilesStartingPrograms(
  options: Omit<BindOptions, "workflowDefault">,
): Promise<ProfileTrust[]> {
  if (!existsSync(join(options.cwd, ".chrys", "agents"))) return [];
  const profiles = await import("@icode/agent-profiles");
  const config = await profiles.loadAgentConfig({
    chrysHome: options.chrysHome,
    cwd: options.cwd,
    env: options.env,
    homeDir: options.homeDir,
    normalize: false,
  });
  const found: ProfileTrust[] = [];
  for (const profile of config.profiles) {
    if (profile.source !== "project") continue;
    const trust = await profiles.profileTrust(profile, {
      cwd: options.cwd,
      chrysHome: options.chrysHome,
      homeDir: options.homeDir,
      settings: config.settings,
    });
    if (trust.requiresTrust) found.push(trust);
  }
  return found;
}
