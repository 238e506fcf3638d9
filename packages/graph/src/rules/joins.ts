import type { Diagnostic } from "@icode/workflow-errors";
import { edgeKey, type JoinNode } from "../schema";
import { edgesFrom, edgesInto, type GraphIndex, nodeNamed, nodeNumber } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

/**
 * `join_destination_edge`: a join's destination has another direct incoming edge, or the join node is not
 * connected to its destination alone.
 */
export const joinDestinationEdge: GraphRule<"join_destination_edge"> = {
  id: "join_destination_edge",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    for (const join of joinsOf(index)) {
      const into = edgesInto(index, join.target);
      const joinEdgeAt = into.findIndex((edge) => edge.source === join.id);
      if (joinEdgeAt === -1) {
        found.push(
          ruleError("join_destination_edge", definition, {
            message: `the join node ${q(join.id)} has no edge to its destination ${q(join.target)}`,
            node: join.id,
            site: join.site,
            hint: `A join node passes its result to its destination: add the edge ${q(`${join.id}->${join.target}`)}.`,
          }),
        );
      }
      into.forEach((edge, at) => {
        if (edge.source === join.id) return;
        const edgeIsLater = joinEdgeAt !== -1 && at > joinEdgeAt;
        found.push(
          ruleError("join_destination_edge", definition, {
            message: `${q(join.target)} is the destination of join() and cannot also receive the direct edge ${q(
              edgeKey(edge),
            )}`,
            node: edgeIsLater ? edgeKey(edge) : join.id,
            site: edgeIsLater ? edge.site : join.site,
            hint: `List ${q(edge.source)} among the join's sources instead of connecting it to ${q(join.target)} directly.`,
          }),
        );
      });
      for (const edge of edgesFrom(index, join.id)) {
        if (edge.target === join.target) continue;
        found.push(
          ruleError("join_destination_edge", definition, {
            message: `the join node ${q(join.id)} has an edge to ${q(edge.target)}; it may only lead to ${q(join.target)}`,
            node: edgeKey(edge),
            site: edge.site,
            hint: `Connect ${q(join.target)} to ${q(edge.target)} instead.`,
          }),
        );
      }
    }
    return found;
  },
};

/**
 * `join_sources`: a join lists a source twice (or none, caught by the schema), a listed source has no edge
 * into the join node, or an edge into the join node comes from a node that is not a listed source.
 */
export const joinSources: GraphRule<"join_sources"> = {
  id: "join_sources",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    // Marks by node number rather than sets of IDs, as a join may have thousands of sources:
    // listedBy[v] === j when v is a listed source of join j, connectedTo[v] === j when v has an edge into j.
    const listedBy = new Int32Array(index.nodes.length).fill(-1);
    const connectedTo = new Int32Array(index.nodes.length).fill(-1);
    for (const join of joinsOf(index)) {
      const j = nodeNumber(index, join.id);
      const listed: number[] = [];
      for (let i = 0; i < join.sources.length; i++) {
        const source = join.sources[i]!;
        const v = nodeNumber(index, source);
        if (v < 0) continue; // unknown_node's to report, in phase 1
        if (listedBy[v] === j) {
          found.push(
            ruleError("join_sources", definition, {
              message: `the join into ${q(join.target)} lists the source ${q(source)} more than once`,
              node: join.id,
              site: join.site,
              hint: "List each source once; the combine function receives sources in the order listed.",
            }),
          );
          continue;
        }
        listedBy[v] = j;
        listed.push(v);
      }
      const { start, edges } = index.incoming;
      for (let at = start[j]!; at < start[j + 1]!; at++) {
        const e = edges[at]!;
        const edge = definition.edges[e]!;
        const v = index.edgeSources[e]!;
        connectedTo[v] = j;
        if (listedBy[v] === j) continue;
        found.push(
          ruleError("join_sources", definition, {
            message: `the edge ${q(edgeKey(edge))} leads into the join node, but ${q(edge.source)} is not one of its sources`,
            node: edgeKey(edge),
            site: edge.site,
            hint: `Add ${q(edge.source)} to the join's sources, or connect it elsewhere.`,
          }),
        );
      }
      for (let i = 0; i < listed.length; i++) {
        const v = listed[i]!;
        if (connectedTo[v] === j) continue;
        const source = index.nodes[v]!.id;
        found.push(
          ruleError("join_sources", definition, {
            message: `the join source ${q(source)} has no edge into ${q(join.id)}`,
            node: join.id,
            site: join.site,
            hint: `Every source of a join has an edge ${q(`${source}->${join.id}`)}, as join() declares it.`,
          }),
        );
      }
    }
    return found;
  },
};

/** The join nodes, each ID's first declaration only (`duplicate_name` reports the others). */
function joinsOf(index: GraphIndex): JoinNode[] {
  return index.joins.filter((join) => nodeNamed(index, join.id) === join);
}
