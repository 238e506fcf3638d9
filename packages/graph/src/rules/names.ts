import type { Diagnostic } from "@icode/workflow-errors";
import { joinNodeId } from "../schema";
import { nodeNamed } from "../topology";
import { type GraphRule, q, ruleError } from "./rule";

const NAMING =
  "Node names must be unique across the workflow, nonempty, must not start with `join:` and must not contain `->`.";
const RENAME = `Rename the node. ${NAMING}`;

/** `invalid_name`: empty names, `join:` prefixes and `->`; a join node's ID must be `join:<target>`. */
export const invalidName: GraphRule<"invalid_name"> = {
  id: "invalid_name",
  phase: 1,
  check(definition) {
    const found: Diagnostic[] = [];
    for (let v = 0; v < definition.nodes.length; v++) {
      const node = definition.nodes[v]!;
      let problem: string | null = null;
      let hint = RENAME;
      if (node.kind === "join") {
        if (node.id !== joinNodeId(node.target)) {
          problem = `the join node ${q(node.id)} into ${q(node.target)} must be named ${q(joinNodeId(node.target))}`;
          hint = "A join node's ID is derived from its destination: `join:<destination>`.";
        }
      } else if (node.id === "") {
        problem = `a ${node.kind} node has an empty name`;
      } else if (node.id.startsWith("join:")) {
        problem = `the ${node.kind} node name ${q(node.id)} starts with \`join:\`, which is reserved for join nodes`;
      } else if (node.id.includes("->")) {
        problem = `the ${node.kind} node name ${q(node.id)} contains \`->\`, which separates the ends of an edge`;
      }
      if (problem !== null) {
        found.push(
          ruleError("invalid_name", definition, { message: problem, node: node.id, site: node.site, hint }),
        );
      }
    }
    return found;
  },
};

/** `duplicate_name`: a node ID declared more than once (reported at every declaration after the first). */
export const duplicateName: GraphRule<"duplicate_name"> = {
  id: "duplicate_name",
  phase: 1,
  check(definition, index) {
    const found: Diagnostic[] = [];
    if (index.numbers.size === definition.nodes.length) return found; // every ID is declared once
    const seen = new Set<string>();
    for (const node of definition.nodes) {
      if (!seen.has(node.id)) {
        seen.add(node.id);
        continue;
      }
      const first = nodeNamed(index, node.id);
      const where = first?.site ? ` (first declared at ${first.site.file}:${first.site.line})` : "";
      const joined = node.kind === "join";
      found.push(
        ruleError("duplicate_name", definition, {
          message: joined
            ? `${q(node.target)} is the destination of a second join; its join node ${q(node.id)} already exists${where}`
            : `the name ${q(node.id)} is already used by another node${where}`,
          node: node.id,
          site: node.site,
          hint: joined
            ? "Give each destination one join() and list every source in it."
            : `Give this ${node.kind} node a different name. ${NAMING}`,
        }),
      );
    }
    return found;
  },
};
