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
    const known = (ref: string) => index.numbers.has(ref);
    // Called only for a missing reference, so that no message is built for the many that are fine.
    const report = (ref: string, what: string, node: string | null, site: Site | null) => {
      found.push(
        ruleError("unknown_node", definition, {
          message: `${what} ${q(ref)}, but no node has that name`,
          node,
          site,
          hint: HINT,
        }),
      );
    };

    const start = definition.start;
    if (start !== "" && !known(start)) report(start, "the start is", start, null);
    for (let i = 0; i < definition.outputs.length; i++) {
      const output = definition.outputs[i]!;
      if (!known(output)) report(output, "an output is", output, null);
    }
    for (let v = 0; v < definition.nodes.length; v++) {
      const node = definition.nodes[v]!;
      const { id, site } = node;
      if (node.scope !== null && !known(node.scope)) {
        report(node.scope, `the node ${q(id)} is in the body of`, id, site);
      }
      if (node.kind === "loop") {
        if (!known(node.entry)) report(node.entry, `the loop ${q(id)} has the entry`, id, site);
        if (!known(node.exit)) report(node.exit, `the loop ${q(id)} has the exit`, id, site);
      } else if (node.kind === "join") {
        for (let i = 0; i < node.sources.length; i++) {
          const source = node.sources[i]!;
          if (!known(source)) report(source, `the join ${q(id)} has the source`, id, site);
        }
        if (!known(node.target)) report(node.target, `the join ${q(id)} has the destination`, id, site);
      }
    }
    definition.edges.forEach((edge, e) => {
      const sourceKnown = index.edgeSources[e]! >= 0;
      const targetKnown = index.edgeTargets[e]! >= 0;
      const scopeKnown = edge.scope === null || known(edge.scope);
      if (sourceKnown && targetKnown && scopeKnown) return;
      const key = edgeKey(edge);
      if (!sourceKnown) report(edge.source, `the edge ${q(key)} starts at`, key, edge.site);
      if (!targetKnown) report(edge.target, `the edge ${q(key)} ends at`, key, edge.site);
      if (!scopeKnown && edge.scope !== null)
        report(edge.scope, `the edge ${q(key)} is in the body of`, key, edge.site);
    });
    return found;
  },
};
