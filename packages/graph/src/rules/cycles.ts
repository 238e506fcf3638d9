import type { Diagnostic } from "@icode/workflow-errors";
import { type Edge, edgeKey } from "../schema";
import type { GraphIndex } from "../topology";
import { edgesFrom, edgesInto } from "../topology";
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
    const cycles = findCycles(index);
    if (cycles.length === 0) return [];
    const position = new Map(definition.edges.map((edge, at) => [edge, at]));
    const closed = cycles.map((edges) => {
      const closing = edges.reduce((last, edge) => (position.get(edge)! > position.get(last)! ? edge : last));
      return { edges, closing, at: position.get(closing)! };
    });
    closed.sort((a, b) => a.at - b.at);
    return closed.map(({ edges, closing }): Diagnostic => {
      const from = edges.indexOf(closing);
      const path = [...edges.slice(from + 1), ...edges.slice(0, from + 1)].map((edge) => edge.source);
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
 * One cycle per strongly connected component that has one, as its edges in path order
 * (`edges[i].target === edges[i + 1].source`, wrapping around). Empty exactly when the graph is acyclic.
 * Tarjan's algorithm, iterative; edges with an undeclared end are ignored.
 */
function findCycles(index: GraphIndex): Edge[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (id: string) => {
    order.set(id, order.size);
    low.set(id, order.size - 1);
    stack.push(id);
    onStack.add(id);
  };

  for (const root of index.nodes.keys()) {
    if (order.has(root)) continue;
    visit(root);
    const work: { id: string; next: number }[] = [{ id: root, next: 0 }];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const out = edgesFrom(index, frame.id);
      if (frame.next < out.length) {
        const target = out[frame.next++]!.target;
        if (!index.nodes.has(target)) continue;
        if (!order.has(target)) {
          visit(target);
          work.push({ id: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.id, Math.min(low.get(frame.id)!, order.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(frame.id)!));
      if (low.get(frame.id) !== order.get(frame.id)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.id);
      const selfLoop =
        component.length === 1 && edgesFrom(index, frame.id).some((edge) => edge.target === frame.id);
      if (component.length > 1 || selfLoop) components.push(component);
    }
  }

  return components.map((component) => {
    // Every member has a predecessor inside its component, so walking back inside it must come round.
    const members = new Set(component);
    const seenAt = new Map<string, number>();
    const steps: Edge[] = [];
    let at = component[component.length - 1]!;
    while (!seenAt.has(at)) {
      seenAt.set(at, steps.length);
      const back = edgesInto(index, at).find((edge) => members.has(edge.source))!;
      steps.push(back);
      at = back.source;
    }
    return steps.slice(seenAt.get(at)).reverse();
  });
}
