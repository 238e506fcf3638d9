import type { Refusal } from "../run/report";

export interface WorkflowModelOptions {
  readonly chrysHome: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
}

/**
 * Checks the default model asked for a new session (`RunRequest.model`, `icode workflow run --model`) before
 * anything else happens: it must resolve like any explicit model selector (exact id, then a unique exact
 * name, then a unique name ignoring case) to a usable model profile, whether or not an agent node of the
 * workflow ends up using it. Refuses with the selection code (`model_unresolvable`, `model_ambiguous`).
 * Reads the model profiles only; changes no file.
 */
export async function checkWorkflowModel(
  model: string,
  options: WorkflowModelOptions,
): Promise<Refusal | null> {
  const profiles = await import("@icode/agent-profiles");
  const config = await profiles.loadAgentConfig({
    chrysHome: options.chrysHome,
    cwd: options.cwd,
    env: options.env,
    homeDir: options.homeDir,
    normalize: false,
    acpPresets: false,
  });
  const found = profiles.matchModel(config, model);
  if (found.ok) return null;
  return {
    code: found.code === "model_ambiguous" ? "model_ambiguous" : "model_unresolvable",
    message: `model: the workflow's default model ${JSON.stringify(model)}: ${found.message}`,
    hint: found.hint,
  };
}
