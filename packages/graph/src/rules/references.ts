import type { Diagnostic } from "@icode/workflow-errors";
import { edgeKey, type Site } from "../schema";
import { type GraphRule, q, ruleError } from "./rule";

const HINT =
  "Refer only to nodes declared in this workflow, using the handles that python(), agent() and loop() return.";

/**
 * `unknown_node`: a reference to a node that is not declared: the start, an output, an edge's ends or
 * scope, a node's scope, a loop's entry or exit, a join's sources or destination.
 */
export const unknownNode: GraphRule<"unknown_node"> = {
  id: "unknown_node",
  phase: 1,
  check(definition, index) {
    const found: Diagnostic[] = [];
    const report = (ref: string, what: string, node: string | null, site: Site | null) => {
      if (index.nodes.has(ref)) return;
      found.push(
        ruleError("unknown_node", definition, {
          message: `${what} ${q(ref)}, but no node has that name`,
          node,
          site,
          hint: HINT,
        }),
      );
    };

    if (definition.start !== "") report(definition.start, "the start is", definition.start, null);
    for (const output of definition.outputs) report(output, "an output is", output, null);
    for (const node of definition.nodes) {
      if (node.scope !== null)
        report(node.scope, `the node ${q(node.id)} is in the body of`, node.id, node.site);
      if (node.kind === "loop") {
        report(node.entry, `the loop ${q(node.id)} has the entry`, node.id, node.site);
        report(node.exit, `the loop ${q(node.id)} has the exit`, node.id, node.site);
      } else if (node.kind === "join") {
        for (const source of node.sources)
          report(source, `the join ${q(node.id)} has the source`, node.id, node.site);
        report(node.target, `the join ${q(node.id)} has the destination`, node.id, node.site);
      }
    }
    for (const edge of definition.edges) {
      const key = edgeKey(edge);
      report(edge.source, `the edge ${q(key)} starts at`, key, edge.site);
      report(edge.target, `the edge ${q(key)} ends at`, key, edge.site);
      if (edge.scope !== null) report(edge.scope, `the edge ${q(key)} is in the body of`, key, edge.site);
    }
    return found;
  },
};
