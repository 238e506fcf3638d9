import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import type { z } from "zod";
import { parseDefinitionFast } from "./definition-parse";
import { cycle } from "./rules/cycles";
import { crossScopeEdge, duplicateEdge, selfEdge } from "./rules/edges";
import { joinDestinationEdge, joinSources } from "./rules/joins";
import { loopBoundary, nestedLoop } from "./rules/loops";
import { duplicateName, invalidName } from "./rules/names";
import { unreachable } from "./rules/reachability";
import { unknownNode } from "./rules/references";
import {
  type GraphPhase,
  type GraphRule,
  type GraphRuleId,
  type GraphWarningId,
  position,
} from "./rules/rule";
import { duplicateOutput, noOutputs, noStart, notTopLevel } from "./rules/start-outputs";
import { switchCases, switchTwice } from "./rules/switches";
import { loopExitAllConditional, loopExitMayBeSkipped } from "./rules/warnings";
import { type Definition, DefinitionSchema, type Site, SiteSchema } from "./schema";
import { type GraphIndex, indexDefinition } from "./topology";

/**
 * Every check of the `graph` stage, in the order they run. A phase runs only when the phases before it
 * found no error (see {@link GraphPhase}), so one mistake is reported once.
 */
export const GRAPH_CHECKS: readonly GraphRule[] = [
  invalidName,
  duplicateName,
  unknownNode,
  noStart,
  notTopLevel,
  noOutputs,
  duplicateOutput,
  selfEdge,
  duplicateEdge,
  crossScopeEdge,
  nestedLoop,
  loopBoundary,
  joinDestinationEdge,
  joinSources,
  switchCases,
  switchTwice,
  unreachable,
  cycle,
  loopExitAllConditional,
  loopExitMayBeSkipped,
];

/** One diagnostic and the check that produced it. */
export interface GraphFinding {
  readonly rule: GraphRuleId | GraphWarningId;
  readonly diagnostic: Diagnostic;
}

/** Schema problems reported one by one before the rest are summed up in one last diagnostic. */
export const MAX_SCHEMA_DIAGNOSTICS = 50;

/**
 * Runs the structural checks on a Definition that already matches the schema and names the rule behind
 * each diagnostic. `validateDefinition` is this plus the schema check.
 */
export function checkDefinition(
  definition: Definition,
  index: GraphIndex = indexDefinition(definition),
): GraphFinding[] {
  const findings: GraphFinding[] = [];
  let phase: GraphPhase | 0 = 0;
  for (const rule of GRAPH_CHECKS) {
    if (rule.phase !== phase) {
      if (findings.some((finding) => finding.diagnostic.severity === "error")) break;
      phase = rule.phase;
    }
    for (const found of rule.check(definition, index)) findings.push({ rule: rule.id, diagnostic: found });
  }
  return findings;
}

/**
 * Checks a built workflow graph (the JSON a Python `build()` emits, or a compiled pipeline) against the
 * Definition schema and every structural rule of the spec, in O(nodes + edges).
 *
 * `definition` is the parsed Definition whenever the input matches the schema, even when a structural rule
 * failed (so a report can still count nodes and edges); run it only when no diagnostic is an error.
 * Errors have the code `manifest_invalid` and a message led by the rule ID (`cycle: …`); warnings carry their
 * own code. Every diagnostic has stage `graph`.
 */
export function validateDefinition(input: unknown): {
  definition: Definition | null;
  diagnostics: Diagnostic[];
} {
  const fast = parseDefinitionFast(input);
  if (fast !== null) return { definition: fast, diagnostics: checkDefinition(fast).map((f) => f.diagnostic) };
  const parsed = DefinitionSchema.safeParse(input);
  if (!parsed.success) {
    return {
      definition: null,
      diagnostics: schemaFindings(input, parsed.error.issues).map((f) => f.diagnostic),
    };
  }
  return { definition: parsed.data, diagnostics: checkDefinition(parsed.data).map((f) => f.diagnostic) };
}

/**
 * Turns schema issues into `manifest_invalid` diagnostics that name the JSON path. Two issues have a rule
 * of their own, as the Python builder sees them: an empty node ID (`invalid_name`) and a join without
 * sources (`join_sources`).
 */
function schemaFindings(input: unknown, issues: readonly z.core.$ZodIssue[]): GraphFinding[] {
  const buildSite = siteIn(field(input, "build_site"));
  const findings = issues.slice(0, MAX_SCHEMA_DIAGNOSTICS).map((issue): GraphFinding => {
    const path = issue.path;
    const where = formatPath(path);
    const [list, at, key] = path;
    const item =
      typeof at === "number" && (list === "nodes" || list === "edges") ? itemAt(input, list, at) : null;
    let rule: GraphRuleId = "schema";
    let message = `${where}: ${issue.message}`;
    let hint =
      "The definition must match the Definition schema of @icode/workflow-graph. The program that produced it " +
      "(the workflow builder or a pipeline compiler) has a bug; report it with this message.";
    if (list === "nodes" && key === "id" && path.length === 3 && issue.code === "too_small") {
      rule = "invalid_name";
      message = `${where}: a node has an empty name`;
      hint = "Give the node a nonempty name that is unique across the workflow.";
    } else if (list === "nodes" && key === "sources" && path.length === 3 && issue.code === "too_small") {
      rule = "join_sources";
      message = `${where}: the join ${JSON.stringify(field(item, "id"))} has no sources`;
      hint = "Pass join() at least one source node.";
    }
    return {
      rule,
      diagnostic: diagnostic({
        code: "manifest_invalid",
        stage: "graph",
        message: `${rule}: ${message}`,
        node: nodeNameOf(list, item),
        hint,
        ...position(siteIn(field(item, "site")), buildSite),
      }),
    };
  });
  const left = issues.length - findings.length;
  if (left > 0) {
    findings.push({
      rule: "schema",
      diagnostic: diagnostic({
        code: "manifest_invalid",
        stage: "graph",
        message: `schema: ${left} more schema problem${left === 1 ? "" : "s"} not shown`,
        hint: "Fix the problems above first.",
        ...position(null, buildSite),
      }),
    });
  }
  return findings;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "the definition";
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else text += text === "" ? String(key) : `.${String(key)}`;
  }
  return text;
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function itemAt(input: unknown, list: "nodes" | "edges", at: number): unknown {
  const items = field(input, list);
  return Array.isArray(items) ? items[at] : undefined;
}

function siteIn(value: unknown): Site | null {
  const parsed = SiteSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

function nodeNameOf(list: PropertyKey | undefined, item: unknown): string | null {
  if (list === "nodes") {
    const id = field(item, "id");
    return typeof id === "string" && id !== "" ? id : null;
  }
  if (list === "edges") {
    const source = field(item, "source");
    const target = field(item, "target");
    return typeof source === "string" && typeof target === "string" ? `${source}->${target}` : null;
  }
  return null;
}
