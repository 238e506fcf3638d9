import type { Diagnostic } from "@icode/workflow-errors";
import { nodeNamed } from "../topology";
import { type GraphRule, q, ruleError, siteOf } from "./rule";

/** `no_start`: `start()` was never called. */
export const noStart: GraphRule<"no_start"> = {
  id: "no_start",
  phase: 2,
  check(definition) {
    if (definition.start !== "") return [];
    return [
      ruleError("no_start", definition, {
        message: "the workflow has no start node",
        node: null,
        site: null,
        hint: "Call wf.start(node) once with the top-level node that receives the run's input.",
      }),
    ];
  },
};

/** `not_top_level`: the start or an output is a node inside a loop body. */
export const notTopLevel: GraphRule<"not_top_level"> = {
  id: "not_top_level",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    const check = (id: string, role: string, call: string) => {
      const node = nodeNamed(index, id);
      if (node === undefined || node.scope === null) return;
      found.push(
        ruleError("not_top_level", definition, {
          message: `the ${role} ${q(id)} is inside the body of loop ${q(node.scope)}; it must be a top-level node`,
          node: id,
          site: node.site,
          hint: `Pass ${call} a node created by the WorkflowBuilder itself, such as the loop node ${q(node.scope)}.`,
        }),
      );
    };
    if (definition.start !== "") check(definition.start, "start node", "wf.start()");
    for (const output of definition.outputs) check(output, "output", "wf.output()");
    return found;
  },
};

/** `no_outputs`: `output()` was never called. */
export const noOutputs: GraphRule<"no_outputs"> = {
  id: "no_outputs",
  phase: 2,
  check(definition) {
    if (definition.outputs.length > 0) return [];
    return [
      ruleError("no_outputs", definition, {
        message: "the workflow declares no output node",
        node: null,
        site: null,
        hint: "Call wf.output(node) for each top-level node whose result the run should return.",
      }),
    ];
  },
};

/** `duplicate_output`: the same node declared as an output twice. */
export const duplicateOutput: GraphRule<"duplicate_output"> = {
  id: "duplicate_output",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    const seen = new Set<string>();
    for (const output of definition.outputs) {
      if (!seen.has(output)) {
        seen.add(output);
        continue;
      }
      found.push(
        ruleError("duplicate_output", definition, {
          message: `the node ${q(output)} is declared as an output more than once`,
          node: output,
          site: siteOf(index, output),
          hint: "Call wf.output() once per node; outputs are collected in declaration order.",
        }),
      );
    }
    return found;
  },
};
