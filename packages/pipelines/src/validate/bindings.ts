import type { AgentProfile, ModelMatch, ProfileMatch } from "@icode/agent-profiles";
import type { PipelineDefinition } from "../definition";
import type { Found, PipelineReportBuilder } from "./report";

/**
 * How the engine resolves a node's `profile_id` and `model` on this computer: `matchProfile` and
 * `matchModel` of `@icode/agent-profiles` over the loaded configuration. Validation loads no files itself.
 */
export interface PipelineBindings {
  resolveProfile(id: string): ProfileMatch;
  resolveModel(selector: string): ModelMatch;
}

/**
 * The `bindings` stage: every `profile_id` resolves, and every `model` that names one of our model
 * profiles resolves. A model is such a selector when the node runs our native loop: runtime `auto` with no
 * profile (the default main agent, never an ACP one) or a native profile. With an ACP runtime or an ACP
 * profile, `model` is the agent's own model name, passed to it unchecked.
 */
export function bindingsStage(
  report: PipelineReportBuilder,
  definition: PipelineDefinition,
  bindings: PipelineBindings,
): boolean {
  const found: Found[] = [];
  definition.nodes.forEach((node, i) => {
    let profile: AgentProfile | null = null;
    if (node.profile_id !== null) {
      const match = bindings.resolveProfile(node.profile_id);
      if (match.ok) profile = match.profile;
      else {
        found.push(
          report.at(["nodes", i, "profile_id"], {
            code: match.code,
            node: node.id,
            message: `node "${node.id}": ${match.message}`,
            hint: match.hint,
            notes: match.candidates.map((c) => ({ message: `matches ${c}`, file: null, line: null })),
          }),
        );
        return;
      }
    }
    const native = node.runtime === "auto" && (profile === null || profile.kind === "native");
    if (node.model === null || !native) return;
    const match = bindings.resolveModel(node.model);
    if (!match.ok) {
      found.push(
        report.at(["nodes", i, "model"], {
          code: match.code,
          node: node.id,
          message: `node "${node.id}": ${match.message}`,
          hint: match.hint,
          notes: match.candidates.map((c) => ({ message: `matches ${c}`, file: null, line: null })),
        }),
      );
    }
  });
  return report.stage("bindings", found);
}
