import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import type { Definition, Site } from "../schema";
import { type GraphIndex, nodeNamed } from "../topology";

/** The codes the `graph` stage emits. */
export const GRAPH_CODES = [
  "manifest_invalid",
  "loop_exit_all_conditional",
  "loop_exit_may_be_skipped",
] as const;
export type GraphCode = (typeof GRAPH_CODES)[number];

/**
 * Structural rule IDs. Every `manifest_invalid` diagnostic names one of them (the message starts with
 * `<rule>: `). They match the `chrys.workflows` builder's rule IDs, so `fixtures/graphs/cases.json` can
 * expect the same ID from both. `schema` (the JSON does not match the Definition schema) is ours alone.
 */
export const GRAPH_RULES = [
  "invalid_name",
  "duplicate_name",
  "unknown_node",
  "no_start",
  "not_top_level",
  "no_outputs",
  "duplicate_output",
  "self_edge",
  "duplicate_edge",
  "cross_scope_edge",
  "nested_loop",
  "loop_boundary",
  "join_destination_edge",
  "join_sources",
  "switch_cases",
  "switch_twice",
  "unreachable",
  "cycle",
  "schema",
] as const;
export type GraphRuleId = (typeof GRAPH_RULES)[number];

/** Warning IDs: each is also the diagnostic's code. */
export const GRAPH_WARNINGS = ["loop_exit_all_conditional", "loop_exit_may_be_skipped"] as const;
export type GraphWarningId = (typeof GRAPH_WARNINGS)[number];

/**
 * When a check runs. Checks of a phase run only when every earlier phase found no error, so one mistake
 * is reported once, not again by every check that depends on it:
 * 1 names and references, 2 declarations, 3 whole-graph (reachability, cycles), 4 warnings.
 * A check may rely on that: from phase 2 on every ID is declared once and every reference names a node.
 */
export type GraphPhase = 1 | 2 | 3 | 4;

/**
 * One small named check: pure, `(definition, index) → diagnostics`. Checks walk nodes, edges and join
 * sources by index, not with `for…of`: they run once per run, mostly before V8 has optimized them, and
 * there `for…of` allocates an iterator result per item.
 */
export interface GraphRule<Id extends GraphRuleId | GraphWarningId = GraphRuleId | GraphWarningId> {
  readonly id: Id;
  readonly phase: GraphPhase;
  readonly check: (definition: Definition, index: GraphIndex) => Diagnostic[];
}

/** A structural error: `manifest_invalid`, the rule ID leading the message, placed at `site`. */
export function ruleError(
  rule: GraphRuleId,
  definition: Definition,
  fields: { message: string; node: string | null; site: Site | null; hint: string },
): Diagnostic {
  return placed(definition, fields.site, {
    code: "manifest_invalid",
    stage: "graph",
    severity: "error",
    message: `${rule}: ${fields.message}`,
    node: fields.node,
    hint: fields.hint,
  });
}

/** A warning whose code is its ID. */
export function ruleWarning(
  warning: GraphWarningId,
  definition: Definition,
  fields: { message: string; node: string | null; site: Site | null; hint: string },
): Diagnostic {
  return placed(definition, fields.site, {
    code: warning,
    stage: "graph",
    severity: "warning",
    message: fields.message,
    node: fields.node,
    hint: fields.hint,
  });
}

function placed(
  definition: Definition,
  site: Site | null,
  fields: Pick<Diagnostic, "code" | "stage" | "severity" | "message" | "node" | "hint">,
): Diagnostic {
  return diagnostic({ ...fields, ...position(site, definition.build_site) });
}

/**
 * Where a diagnostic points: at the declaration's site, or when there is none (too many declarations were
 * recorded, or the problem concerns the whole graph) at the `build()` call. A diagnostic placed at a
 * declaration notes where `build()` was called, as the Python builder's errors do.
 */
export function position(
  site: Site | null,
  build: Site | null,
): Pick<Diagnostic, "file" | "line" | "column" | "end_line" | "end_column" | "notes"> {
  const at = site ?? build;
  return {
    file: at?.file ?? null,
    line: at?.line ?? null,
    column: at?.column ?? null,
    end_line: at?.end_line ?? null,
    end_column: at?.end_column ?? null,
    notes:
      site !== null && build !== null
        ? [{ message: "build() called here", file: build.file, line: build.line }]
        : [],
  };
}

/** A name as it appears in a message: quoted, with control characters escaped. */
export function q(name: string): string {
  return JSON.stringify(name);
}

/** The site of a node, or `null` when it is unknown or was not recorded. */
export function siteOf(index: GraphIndex, id: string): Site | null {
  return nodeNamed(index, id)?.site ?? null;
}
