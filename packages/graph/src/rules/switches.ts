import type { Diagnostic } from "@icode/workflow-errors";
import { edgeKey } from "../schema";
import { type GraphRule, q, ruleError } from "./rule";

/**
 * `switch_cases`: a switch group whose case indices are not 0..n-1 in declaration order, or that has no
 * default edge. (A switch's edges are its cases in order, then its default.)
 */
export const switchCases: GraphRule<"switch_cases"> = {
  id: "switch_cases",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    for (const groups of index.switches.values()) {
      for (const group of groups) {
        const misplaced = group.cases.find(
          (edge, at) => edge.condition?.kind === "case" && edge.condition.index !== at,
        );
        if (misplaced !== undefined && misplaced.condition?.kind === "case") {
          const at = group.cases.indexOf(misplaced);
          found.push(
            ruleError("switch_cases", definition, {
              message: `the switch on ${q(group.source)} has case ${misplaced.condition.index} (${q(
                edgeKey(misplaced),
              )}) where case ${at} belongs; case indices must run 0, 1, 2, … in order`,
              node: edgeKey(misplaced),
              site: misplaced.site,
              hint: "Emit a switch's edges together: its cases in order, then its default.",
            }),
          );
        }
        if (group.default === null) {
          const last = group.cases[group.cases.length - 1]!;
          found.push(
            ruleError("switch_cases", definition, {
              message: `the switch on ${q(group.source)} has no default edge`,
              node: edgeKey(last),
              site: last.site,
              hint: "Every switch() names a default destination, taken when no case matches.",
            }),
          );
        }
      }
    }
    return found;
  },
};

/** `switch_twice`: a source with more than one switch. */
export const switchTwice: GraphRule<"switch_twice"> = {
  id: "switch_twice",
  phase: 2,
  check(definition, index) {
    const found: Diagnostic[] = [];
    for (const [source, groups] of index.switches) {
      for (const group of groups.slice(1)) {
        const first = group.cases[0] ?? group.default!;
        found.push(
          ruleError("switch_twice", definition, {
            message: `the node ${q(source)} already has a switch; a source can have only one`,
            node: edgeKey(first),
            site: first.site,
            hint: "Merge the cases into one switch() (cases are tried in order), or use edge(..., when=...) for the extra branches.",
          }),
        );
      }
    }
    return found;
  },
};
