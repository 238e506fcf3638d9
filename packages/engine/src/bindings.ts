import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import type { Definition } from "@icode/workflow-graph";
import type { EngineContext } from "./context";

/**
 * The `bindings` stage: every agent node's profile and model must be available on this computer.
 *
 * This engine has no agent-profile store yet (it arrives with `@icode/workflow-agents`), so no profile can
 * be found and every agent node is reported as `agent_profile_missing`, pointing at its declaration.
 * `model_unresolvable` needs profiles and models to exist, so it cannot occur until then.
 */
export function checkBindings(definition: Definition, _ctx: EngineContext): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const node of definition.nodes) {
    if (node.kind !== "agent") continue;
    diagnostics.push(
      diagnostic({
        code: "agent_profile_missing",
        stage: "bindings",
        message: `agent node '${node.id}' names profile '${node.profile}', which is not available on this computer`,
        node: node.id,
        file: node.site?.file ?? null,
        line: node.site?.line ?? null,
        column: node.site?.column ?? null,
        end_line: node.site?.end_line ?? null,
        end_column: node.site?.end_column ?? null,
        hint: "this iCode build has no agent profiles yet; use python nodes, or install a build with agent support",
      }),
    );
  }
  return diagnostics;
}
