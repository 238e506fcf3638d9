import type { Diagnostic } from "@icode/workflow-errors";
import { nodeNumber } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

/**
 * `unreachable`: a top-level node that no path of edges reaches from the start, or a body node that no
 * path reaches from its loop's entry. Iterative, O(nodes + edges).
 */
export const unreachable: GraphRule<"unreachable"> = {
  id: "unreachable",
  phase: 3,
  check(definition, index) {
    // After phase 2 every edge stays inside one scope, so a single walk from the start and from every loop
    // entry at once reaches exactly what each scope's own root reaches.
    const { start, edges } = index.outgoing;
    const reached = new Uint8Array(index.nodes.length);
    const queue = new Int32Array(index.nodes.length); // each node enters it once
    let tail = 0;
    const enter = (v: number) => {
      if (v < 0 || reached[v] === 1) return;
      reached[v] = 1;
      queue[tail++] = v;
    };
    enter(nodeNumber(index, definition.start));
    for (const loop of index.loops) enter(nodeNumber(index, loop.entry));
    for (let head = 0; head < tail; head++) {
      const v = queue[head]!;
      for (let at = start[v]!; at < start[v + 1]!; at++) enter(index.edgeTargets[edges[at]!]!);
    }

    // Top-level nodes first, then the body of each loop in the loops' declaration order (a loop's number
    // is its declaration order), each in declaration order.
    const missed: number[] = [];
    reached.forEach((flag, v) => {
      if (flag === 0) missed.push(v);
    });
    missed.sort((a, b) => index.scopes[a]! - index.scopes[b]! || a - b);

    const found: Diagnostic[] = [];
    for (const v of missed) {
      const node = index.nodes[v]!;
      const scope = index.scopes[v]!;
      const loop = scope < 0 ? null : index.nodes[scope]!;
      const root = loop?.kind === "loop" ? loop.entry : definition.start;
      const where = loop === null ? "at the top level" : `in the body of loop ${q(loop.id)}`;
      const from = loop === null ? "the start node" : "the loop entry";
      found.push(
        ruleError("unreachable", definition, {
          message: `the ${node.kind} node ${q(node.id)} ${where} cannot be reached from ${from} ${q(root)}`,
          node: node.id,
          site: node.site,
          hint: `Connect it with an edge from a node that ${from} ${q(root)} reaches, or remove it.`,
        }),
      );
    }
    return found;
  },
};
