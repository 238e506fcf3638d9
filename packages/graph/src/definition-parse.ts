import type { Definition, Edge, EdgeCondition, Retry, Site, WorkflowNode } from "./schema";

/**
 * The Definition as `DefinitionSchema.parse` returns it, checked by hand, or `null`: anything these checks do
 * not accept is left to the schema, which says what is wrong. Every run and every `validate` parses its
 * workflow's definition, and on a workflow of 1,000 nodes zod's parse costs ~25 µs per node in a fresh
 * process, more than the rest of the engine's Node-side work on that node; this costs well under 1 µs.
 *
 * The checks are those of `DefinitionSchema` and, like zod, build new objects and arrays holding the schema's
 * keys only, in the schema's (code point) key order. The schema stays the reference: the tests hold the two
 * against each other, on valid definitions and on every kind of mistake.
 */
export function parseDefinitionFast(input: unknown): Definition | null {
  if (!isObject(input)) return null;
  const buildSite = siteOrNull(input.build_site);
  const description = input.description;
  const edges = input.edges;
  const nodes = input.nodes;
  const outputs = input.outputs;
  const sitesTruncated = input.sites_truncated;
  const start = input.start;
  const title = input.title;
  if (
    buildSite === undefined ||
    (description !== null && typeof description !== "string") ||
    !Array.isArray(edges) ||
    input.format !== 1 ||
    !Array.isArray(nodes) ||
    !isStrings(outputs) ||
    typeof sitesTruncated !== "boolean" ||
    typeof start !== "string" ||
    typeof title !== "string"
  ) {
    return null;
  }
  const parsedNodes: WorkflowNode[] = new Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) {
    const node = workflowNode(nodes[i]);
    if (node === null) return null;
    parsedNodes[i] = node;
  }
  const parsedEdges: Edge[] = new Array(edges.length);
  for (let i = 0; i < edges.length; i++) {
    const edge = edgeOf(edges[i]);
    if (edge === null) return null;
    parsedEdges[i] = edge;
  }
  return {
    build_site: buildSite,
    description,
    edges: parsedEdges,
    format: 1,
    nodes: parsedNodes,
    outputs: [...outputs],
    sites_truncated: sitesTruncated,
    start,
    title,
  };
}

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStrings(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  // Indexed: in code V8 has not optimized yet `for…of` allocates per item (a join has thousands of sources).
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== "string") return false;
  return true;
}

/** `z.number()` (finite) `.int()` (a safe integer) `.min(min)`. */
function isIntAtLeast(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min;
}

function isIntAtLeastOrNull(value: unknown, min: number): value is number | null {
  return value === null || isIntAtLeast(value, min);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function isStringOrNull(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}

/** A `SiteSchema.nullable()` value; `undefined` when it does not match. */
function siteOrNull(value: unknown): Site | null | undefined {
  if (value === null) return null;
  if (!isObject(value)) return undefined;
  const { column, end_column, end_line, file, line } = value;
  if (
    !isIntAtLeastOrNull(column, 1) ||
    !isIntAtLeastOrNull(end_column, 1) ||
    !isIntAtLeastOrNull(end_line, 1) ||
    typeof file !== "string" ||
    !isIntAtLeast(line, 1)
  ) {
    return undefined;
  }
  return { column, end_column, end_line, file, line };
}

/** A `RetrySchema.nullable()` value; `undefined` when it does not match. */
function retryOrNull(value: unknown): Retry | null | undefined {
  if (value === null) return null;
  if (!isObject(value)) return undefined;
  const { backoff, max_attempts } = value;
  if (!isFiniteNumber(backoff) || backoff < 0 || !isIntAtLeast(max_attempts, 1)) return undefined;
  return { backoff, max_attempts };
}

/** `TimeoutSchema`: positive seconds or `null`. */
function isTimeout(value: unknown): value is number | null {
  return value === null || (isFiniteNumber(value) && value > 0);
}

function workflowNode(value: unknown): WorkflowNode | null {
  if (!isObject(value)) return null;
  const { id, scope } = value;
  const site = siteOrNull(value.site);
  if (typeof id !== "string" || id === "" || !isStringOrNull(scope) || site === undefined) return null;
  switch (value.kind) {
    case "python": {
      const { is_async, takes_context, timeout } = value;
      const retry = retryOrNull(value.retry);
      if (
        typeof is_async !== "boolean" ||
        retry === undefined ||
        typeof takes_context !== "boolean" ||
        !isTimeout(timeout)
      ) {
        return null;
      }
      return { id, is_async, kind: "python", retry, scope, site, takes_context, timeout };
    }
    case "agent": {
      const { instructions_suffix, model, profile, timeout } = value;
      const retry = retryOrNull(value.retry);
      if (
        !isStringOrNull(instructions_suffix) ||
        !isStringOrNull(model) ||
        typeof profile !== "string" ||
        retry === undefined ||
        !isTimeout(timeout)
      ) {
        return null;
      }
      return { id, instructions_suffix, kind: "agent", model, profile, retry, scope, site, timeout };
    }
    case "loop": {
      const { entry, exit, max_iterations, on_exhausted } = value;
      if (
        typeof entry !== "string" ||
        typeof exit !== "string" ||
        !isIntAtLeast(max_iterations, 1) ||
        (on_exhausted !== "continue" && on_exhausted !== "fail")
      ) {
        return null;
      }
      return { entry, exit, id, kind: "loop", max_iterations, on_exhausted, scope, site };
    }
    case "join": {
      const { has_combine, sources, target } = value;
      if (typeof has_combine !== "boolean" || !isStrings(sources) || sources.length < 1) return null;
      if (typeof target !== "string") return null;
      return { has_combine, id, kind: "join", scope, site, sources: [...sources], target };
    }
    default:
      return null;
  }
}

function edgeOf(value: unknown): Edge | null {
  if (!isObject(value)) return null;
  const { scope, source, target } = value;
  const condition = conditionOf(value.condition);
  const site = siteOrNull(value.site);
  if (
    condition === undefined ||
    !isStringOrNull(scope) ||
    site === undefined ||
    typeof source !== "string" ||
    typeof target !== "string"
  ) {
    return null;
  }
  return { condition, scope, site, source, target };
}

/** An `EdgeConditionSchema` value; `undefined` when it does not match. */
function conditionOf(value: unknown): EdgeCondition | undefined {
  if (value === null) return null;
  if (!isObject(value)) return undefined;
  switch (value.kind) {
    case "when":
      return { kind: "when" };
    case "default":
      return { kind: "default" };
    case "case":
      return isIntAtLeast(value.index, 0) ? { index: value.index, kind: "case" } : undefined;
    default:
      return undefined;
  }
}
