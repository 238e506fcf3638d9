import type { Diagnostic } from "@icode/workflow-errors";
import { edgeKey } from "../schema";
import type { GraphIndex } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

const SHOWN = 8;

/**
 * `cycle`: edges that lead back to where they started. One cycle is reported per strongly connected group of
 * nodes, at its edge declared last (the one that closed it), in declaration order of those edges.
 * Iterative, O(nodes + edges).
 */
export const cycle: GraphRule<"cycle"> = {
  id: "cycle",
  phase: 3,
  check(definition, index) {
    if (isAcyclic(index)) return [];
    const closed = findCycles(index).map((edges) => ({
      edges,
      closing: edges.reduce((last, e) => Math.max(last, e)),
    }));
    closed.sort((a, b) => a.closing - b.closing);
    return closed.map(({ edges, closing: at }): Diagnostic => {
      const closing = definition.edges[at]!;
      const from = edges.indexOf(at);
      const path = [...edges.slice(from + 1), ...edges.slice(0, from + 1)].map(
        (e) => definition.edges[e]!.source,
      );
      const shown =
        path.length > SHOWN ? [...path.slice(0, SHOWN).map(q), `… ${path.length - SHOWN} more`] : path.map(q);
      return ruleError("cycle", definition, {
        message: `the edge ${q(edgeKey(closing))} closes a cycle: ${[...shown, q(closing.target)].join(" -> ")}`,
        node: edgeKey(closing),
        site: closing.site,
        hint: "Edges cannot lead back to an earlier node. To repeat nodes, put them in the body of a wf.loop().",
      });
    });
  },
};

/**
 * Whether the graph has no cycle: Kahn's algorithm, which is cheaper than finding the cycles themselves
 * and settles the common case; {@link findCycles} runs only when there is one to report.
 */
function isAcyclic(index: GraphIndex): boolean {
  const { start, edges } = index.outgoing;
  const incoming = index.incoming.start;
  const count = index.nodes.length;
  const waiting = new Int32Array(count);
  const ready = new Int32Array(count); // each node is ready once
  let tail = 0;
  for (let v = 0; v < count; v++) {
    waiting[v] = incoming[v + 1]! - incoming[v]!;
    if (waiting[v] === 0) ready[tail++] = v;
  }
  for (let head = 0; head < tail; head++) {
    const v = ready[head]!;
    for (let at = start[v]!; at < start[v + 1]!; at++) {
      const target = index.edgeTargets[edges[at]!]!;
      if (--waiting[target]! === 0) ready[tail++] = target;
    }
  }
  return tail === count;
}

/**
 * One cycle per strongly connected component that has one, as its edge positions in path order
 * (`target` of each is the `source` of the next, wrapping around). Empty exactly when the graph is acyclic.
 * Tarjan's algorithm, iterative; edges with an undeclared end are ignored.
 */
function findCycles(index: GraphIndex): number[][] {
  const { start, edges } = index.outgoing;
  const count = index.nodes.length;
  const order = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  const components: number[][] = [];
  let visited = 0;
  const visit = (v: number) => {
    order[v] = visited;
    low[v] = visited;
    visited++;
    stack.push(v);
    onStack[v] = 1;
  };

  for (let root = 0; root < count; root++) {
    if (order[root] !== -1) continue;
    visit(root);
    const work: { v: number; next: number }[] = [{ v: root, next: start[root]! }];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.next < start[frame.v + 1]!) {
        const target = index.edgeTargets[edges[frame.next++]!]!;
        if (order[target] === -1) {
          visit(target);
          work.push({ v: target, next: start[target]! });
        } else if (onStack[target] === 1) {
          low[frame.v] = Math.min(low[frame.v]!, order[target]!);
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low[parent.v] = Math.min(low[parent.v]!, low[frame.v]!);
      if (low[frame.v] !== order[frame.v]) continue;
      const component: number[] = [];
      let member: number;
      do {
        member = stack.pop()!;
        onStack[member] = 0;
        component.push(member);
      } while (member !== frame.v);
      if (component.length > 1 || hasSelfEdge(index, frame.v)) components.push(component);
    }
  }

  const { start: into, edges: intoEdges } = index.incoming;
  const memberOf = new Int32Array(count).fill(-1);
  return components.map((component, c) => {
    for (const v of component) memberOf[v] = c;
    // Every member has a predecessor inside its component, so walking back inside it must come round.
    const seenAt = new Map<number, number>();
    const steps: number[] = [];
    let at = component[component.length - 1]!;
    while (!seenAt.has(at)) {
      seenAt.set(at, steps.length);
      let back = -1;
      for (let i = into[at]!; i < into[at + 1]! && back === -1; i++) {
        if (memberOf[index.edgeSources[intoEdges[i]!]!] === c) back = intoEdges[i]!;
      }
      steps.push(back);
      at = index.edgeSources[back]!;
    }
    return steps.slice(seenAt.get(at)).reverse();
  });
}

function hasSelfEdge(index: GraphIndex, v: number): boolean {
  const { start, edges } = index.outgoing;
  for (let at = start[v]!; at < start[v + 1]!; at++) {
    if (index.edgeTargets[edges[at]!] === v) return true;
  }
  return false;
}
