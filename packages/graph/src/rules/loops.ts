import type { Diagnostic } from "@icode/workflow-errors";
import { nodeNamed } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

/** `nested_loop`: a loop node inside a loop body. */
export const nestedLoop: GraphRule<"nested_loop"> = {
  id: "nested_loop",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    for (const node of index.loops) {
      if (node.scope === null) continue;
      found.push(
        ruleError("nested_loop", definition, {
          message: `the loop ${q(node.id)} is inside the body of loop ${q(node.scope)}; nested loops are not supported`,
          node: node.id,
          site: node.site,
          hint: "Declare loops only at the top level, with wf.loop(), and chain them there if you need two.",
        }),
      );
    }
    return found;
  },
};

/**
 * `loop_boundary`: a loop's entry or exit is not a node of that loop's body, or a node's scope names a
 * node that is not a loop.
 */
export const loopBoundary: GraphRule<"loop_boundary"> = {
  id: "loop_boundary",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    for (let v = 0; v < definition.nodes.length; v++) {
      const node = definition.nodes[v]!;
      if (node.kind === "loop") {
        for (const role of ["entry", "exit"] as const) {
          const member = nodeNamed(index, node[role]);
          if (member === undefined || member.scope === node.id) continue;
          found.push(
            ruleError("loop_boundary", definition, {
              message: `the ${role} ${q(member.id)} of loop ${q(node.id)} is ${
                member.scope === null ? "a top-level node" : `in the body of loop ${q(member.scope)}`
              }, not a node of this loop's body`,
              node: node.id,
              site: node.site,
              hint: "The body function must return (entry, exit) handles it created with the scope it receives.",
            }),
          );
        }
      }
      if (node.scope !== null) {
        const owner = nodeNamed(index, node.scope);
        if (owner === undefined || owner.kind === "loop") continue;
        found.push(
          ruleError("loop_boundary", definition, {
            message: `the node ${q(node.id)} is in the scope of ${q(owner.id)}, which is a ${owner.kind} node, not a loop`,
            node: node.id,
            site: node.site,
            hint: "A node's scope is null at the top level or the ID of the loop whose body holds it.",
          }),
        );
      }
    }
    return found;
  },
};
