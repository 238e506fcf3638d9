import type { Diagnostic } from "@icode/workflow-errors";
import type { LoopNode } from "../schema";
import { edgesInto, type GraphIndex, nodeNamed, nodeNumber } from "../topology";
import { type GraphRule, q, ruleWarning } from "./rule";

/**
 * `loop_exit_all_conditional`: a loop's exit (other than its entry) has incoming edges in the body and all of
 * them are conditional (`when`, switch case or default), so an iteration can end with no value.
 */
export const loopExitAllConditional: GraphRule<"loop_exit_all_conditional"> = {
  id: "loop_exit_all_conditional",
  phase: 4,
  check(definition, index) {
    const found: Diagnostic[] = [];
    for (const loop of index.loops) {
      if (!exitAllConditional(index, loop)) continue;
      const exit = nodeNamed(index, loop.exit)!;
      found.push(
        ruleWarning("loop_exit_all_conditional", definition, {
          message: `the exit ${q(loop.exit)} of loop ${q(loop.id)} is reached only through conditional edges; an iteration in which none of them passes a value fails the run with loop_no_value`,
          node: loop.exit,
          site: exit.site,
          hint: `Add an unconditional edge into ${q(loop.exit)}, or make sure one of its conditions always holds (a switch default, for example, must lead to it).`,
        }),
      );
    }
    return found;
  },
};

/**
 * `loop_exit_may_be_skipped`: the exit's own incoming edges are not all conditional, but every path from the
 * entry to the exit crosses a `when` edge, so when those conditions are false the exit is skipped and the
 * loop fails with `loop_no_value`. Switch edges do not count here (one branch of a switch is always taken),
 * so the warning never fires on a body that always reaches its exit.
 */
export const loopExitMayBeSkipped: GraphRule<"loop_exit_may_be_skipped"> = {
  id: "loop_exit_may_be_skipped",
  phase: 4,
  check(definition, index) {
    const found: Diagnostic[] = [];
    const reachedFrom = new Int32Array(index.nodes.length).fill(-1);
    for (const loop of index.loops) {
      if (loop.entry === loop.exit || exitAllConditional(index, loop)) continue;
      if (reachesWithoutWhen(index, loop, reachedFrom)) continue;
      const exit = nodeNamed(index, loop.exit)!;
      found.push(
        ruleWarning("loop_exit_may_be_skipped", definition, {
          message: `every path from the entry ${q(loop.entry)} to the exit ${q(loop.exit)} of loop ${q(
            loop.id,
          )} passes an edge with a \`when\` condition; an iteration in which they are false skips the exit and fails the run with loop_no_value`,
          node: loop.exit,
          site: exit.site,
          hint: `Give ${q(loop.exit)} a path from ${q(loop.entry)} without \`when\` conditions, or use a switch, whose default always takes one branch.`,
        }),
      );
    }
    return found;
  },
};

function exitAllConditional(index: GraphIndex, loop: LoopNode): boolean {
  if (loop.entry === loop.exit) return false;
  const into = edgesInto(index, loop.exit).filter((edge) => edge.scope === loop.id);
  return into.length > 0 && into.every((edge) => edge.condition !== null);
}

/**
 * Whether a path of body edges without a `when` condition leads from the loop's entry to its exit.
 * `reachedFrom` is shared by the loops of a Definition: `reachedFrom[v]` is the number of the last loop
 * whose walk reached `v`, so that each walk costs the size of its body, not of the graph.
 */
function reachesWithoutWhen(index: GraphIndex, loop: LoopNode, reachedFrom: Int32Array): boolean {
  const { start, edges } = index.outgoing;
  const mark = nodeNumber(index, loop.id);
  const entry = nodeNumber(index, loop.entry);
  reachedFrom[entry] = mark;
  const queue = [entry];
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (let at = start[v]!; at < start[v + 1]!; at++) {
      const edge = index.definition.edges[edges[at]!]!;
      const target = index.edgeTargets[edges[at]!]!;
      if (edge.condition?.kind === "when" || edge.scope !== loop.id || reachedFrom[target] === mark) continue;
      reachedFrom[target] = mark;
      queue.push(target);
    }
  }
  return reachedFrom[nodeNumber(index, loop.exit)] === mark;
}
