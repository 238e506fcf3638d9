import type { Diagnostic } from "@icode/workflow-errors";
import { type Edge, edgeKey } from "../schema";
import { type GraphIndex, nodeNamed } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

/** `self_edge`: an edge (or switch branch) from a node to itself. */
export const selfEdge: GraphRule<"self_edge"> = {
  id: "self_edge",
  phase: 2,
  check(definition) {
    const found: Diagnostic[] = [];
    for (let e = 0; e < definition.edges.length; e++) {
      const edge = definition.edges[e]!;
      if (edge.source !== edge.target) continue;
      found.push(
        ruleError("self_edge", definition, {
          message: `the node ${q(edge.source)} is connected to itself`,
          node: edgeKey(edge),
          site: edge.site,
          hint: "To repeat a node, wrap it in wf.loop() and give the loop a stop condition.",
        }),
      );
    }
    return found;
  },
};

/**
 * `duplicate_edge`: a second edge with the same source and destination (edge, chain, switch or join).
 * A join that lists a source twice is `join_sources`' to report, not this rule's.
 */
export const duplicateEdge: GraphRule<"duplicate_edge"> = {
  id: "duplicate_edge",
  phase: 2,
  check(definition, index) {
    // Per source, mark each destination with the source's number: a destination already marked is reached a
    // second time. (No `source->target` key per edge: a large graph has tens of thousands of edges.)
    const { start, edges } = index.outgoing;
    const markedBy = new Int32Array(index.nodes.length).fill(-1);
    const repeats: number[] = [];
    for (let v = 0; v < index.nodes.length; v++) {
      for (let at = start[v]!; at < start[v + 1]!; at++) {
        const e = edges[at]!;
        const target = index.edgeTargets[e]!;
        if (markedBy[target] === v) repeats.push(e);
        markedBy[target] = v;
      }
    }
    repeats.sort((a, b) => a - b);
    const found: Diagnostic[] = [];
    for (const e of repeats) {
      const edge = definition.edges[e]!;
      if (listedTwice(index, edge)) continue;
      const key = edgeKey(edge);
      found.push(
        ruleError("duplicate_edge", definition, {
          message: `the edge ${q(key)} is declared more than once`,
          node: key,
          site: edge.site,
          hint: "Connect two nodes once. To pass a value under several conditions, combine them in one `when` function.",
        }),
      );
    }
    return found;
  },
};

/** `cross_scope_edge`: an edge whose scope differs from the scope of either end. */
export const crossScopeEdge: GraphRule<"cross_scope_edge"> = {
  id: "cross_scope_edge",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    definition.edges.forEach((edge, e) => {
      const from = index.edgeSources[e]!;
      const to = index.edgeTargets[e]!;
      if (from < 0 || to < 0) return;
      const source = index.nodes[from]!;
      const target = index.nodes[to]!;
      if (source.scope === edge.scope && target.scope === edge.scope) return;
      found.push(
        ruleError("cross_scope_edge", definition, {
          message:
            source.scope === target.scope
              ? `the edge ${q(edgeKey(edge))} joins two nodes ${where(source.scope)} but was declared ${where(edge.scope)}`
              : `the edge ${q(edgeKey(edge))} connects ${q(source.id)} (${where(source.scope)}) to ${q(target.id)} (${where(target.scope)})`,
          node: edgeKey(edge),
          site: edge.site,
          hint:
            "Edges stay inside one scope: connect top-level nodes with wf, and body nodes with the scope the loop " +
            "body receives. Values enter a body through its entry and leave through its exit.",
        }),
      );
    });
    return found;
  },
};

function where(scope: string | null): string {
  return scope === null ? "at the top level" : `in the body of loop ${q(scope)}`;
}

function listedTwice(index: GraphIndex, edge: Edge): boolean {
  const join = nodeNamed(index, edge.target);
  if (join?.kind !== "join") return false;
  return join.sources.indexOf(edge.source) !== join.sources.lastIndexOf(edge.source);
}
