import type { Diagnostic } from "@icode/workflow-errors";
import type { GraphIndex } from "../topology";
import { edgesFrom } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

/**
 * `unreachable`: a top-level node that no path of edges reaches from the start, or a body node that no
 * path reaches from its loop's entry. Iterative, O(nodes + edges).
 */
export const unreachable: GraphRule<"unreachable"> = {
  id: "unreachable",
  phase: 3,
  check(definition, index) {
    const found: Diagnostic[] = [];
    const report = (ids: readonly string[], root: string, where: string, from: string) => {
      const reached = reachableFrom(index, root);
      for (const id of ids) {
        if (reached.has(id)) continue;
        const node = index.nodes.get(id)!;
        found.push(
          ruleError("unreachable", definition, {
            message: `the ${node.kind} node ${q(id)} ${where} cannot be reached from ${from} ${q(root)}`,
            node: id,
            site: node.site,
            hint: `Connect it with an edge from a node that ${from} ${q(root)} reaches, or remove it.`,
          }),
        );
      }
    };
    report(index.topLevel, definition.start, "at the top level", "the start node");
    for (const node of definition.nodes) {
      if (node.kind !== "loop" || index.nodes.get(node.id) !== node) continue;
      report(
        index.body.get(node.id) ?? [],
        node.entry,
        `in the body of loop ${q(node.id)}`,
        "the loop entry",
      );
    }
    return found;
  },
};

/** The IDs reachable from `root` (itself included) along edges. */
function reachableFrom(index: GraphIndex, root: string): Set<string> {
  const reached = new Set<string>([root]);
  const queue = [root];
  for (let head = 0; head < queue.length; head++) {
    for (const edge of edgesFrom(index, queue[head]!)) {
      if (reached.has(edge.target)) continue;
      reached.add(edge.target);
      queue.push(edge.target);
    }
  }
  return reached;
}
