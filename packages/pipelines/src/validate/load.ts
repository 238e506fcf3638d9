import type { z } from "zod";
import {
  EFFORTS,
  FAILURE_POLICIES,
  PERMISSION_MODES,
  type PipelineDefinition,
  pipelineDefinitionSchema,
  RUNTIMES,
} from "../definition";
import type { JsonPath } from "../json-pointer";
import type { JsonSource } from "../json-source";
import type { LimitWarning, PipelineLimits } from "../limits";
import { LIMIT_ENV } from "../limits";
import { checkOutputSchema, declaredFields, describe, type OutputSchema } from "../output-schema";
import type { Found, PipelineReportBuilder } from "./report";
import { closest } from "./suggest";

const DEFINITION_FIELDS = ["name", "description", "nodes", "failure_policy", "auto_supervise"];
const NODE_FIELDS = [
  "id",
  "name",
  "profile_id",
  "prompt_template",
  "runtime",
  "cwd",
  "model",
  "effort",
  "permission_mode",
  "skip_permissions",
  "isolate",
  "depends_on",
  "output_schema",
  "skills",
  "requires_approval",
  "reuse_session_of",
];
const LIFECYCLE_FIELDS = ["status", "revision", "source", "locked", "expected_revision", "id"];

const quoted = (values: readonly string[]) => values.map((v) => `"${v}"`).join(", ");

/** What each field must hold, for messages. */
function expected(path: JsonPath, limits: PipelineLimits): string {
  const [first, , field, entry] = path;
  if (path.length === 0) return "a JSON object with at least name and nodes";
  if (first !== "nodes") {
    switch (first) {
      case "$schema":
        return "a string (the JSON Schema's address)";
      case "name":
        return "a non-empty string";
      case "description":
        return "a string";
      case "failure_policy":
        return `one of ${quoted(FAILURE_POLICIES)}`;
      case "auto_supervise":
        return "true or false";
    }
    return "nothing (not a field of a pipeline)";
  }
  if (path.length === 1) return `a list of 1 to ${limits.maxNodes} nodes`;
  if (path.length === 2) return "a node: an object with at least id, name and prompt_template";
  if (entry !== undefined) {
    return field === "depends_on" ? "a node ID (a string)" : "a skill name (a non-empty string)";
  }
  switch (field) {
    case "id":
      return "a node ID: 1 to 64 letters, digits, _ or -, not starting with -";
    case "name":
    case "prompt_template":
      return "a non-empty string";
    case "profile_id":
    case "cwd":
    case "model":
    case "reuse_session_of":
      return "a string or null";
    case "runtime":
      return `one of ${quoted(RUNTIMES)}`;
    case "effort":
      return `one of ${quoted(EFFORTS)}, or null`;
    case "permission_mode":
      return `one of ${quoted(PERMISSION_MODES)}, or null`;
    case "skip_permissions":
    case "isolate":
      return "true, false or null";
    case "depends_on":
      return "a list of node IDs";
    case "output_schema":
      return "a JSON object (a schema of the supported subset) or null";
    case "skills":
      return "a list of skill names";
    case "requires_approval":
      return "true or false";
  }
  return "nothing";
}

function valueAt(root: unknown, path: JsonPath): unknown {
  let value = root;
  for (const segment of path) {
    if (typeof value !== "object" || value === null) return undefined;
    if (!Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  return value;
}

/** `node "plan"` (or `nodes[3]` when the node has no usable ID) for the node a path is inside, else null. */
function nodeLabel(root: unknown, path: JsonPath): { id: string | null; label: string } | null {
  if (path[0] !== "nodes" || typeof path[1] !== "number") return null;
  const id = valueAt(root, ["nodes", path[1], "id"]);
  return typeof id === "string" && id !== ""
    ? { id, label: `node "${id}"` }
    : { id: null, label: `nodes[${path[1]}]` };
}

function fieldName(path: JsonPath): string {
  const inNode = path[0] === "nodes" && path.length > 2;
  const rest = inNode ? path.slice(2) : path;
  return rest.map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`)).join("");
}

/**
 * The `load` stage: the text is one JSON object (no syntax errors, no key given twice) that fits the
 * definition schema under `limits`, with every `output_schema` in the supported subset. Returns the
 * definition when the stage passed.
 */
export function loadStage(
  report: PipelineReportBuilder,
  source: JsonSource,
  limits: PipelineLimits,
  limitWarnings: readonly LimitWarning[],
): PipelineDefinition | null {
  // A setting of the environment has no place in the document: no pointer, no line.
  const found: Found[] = limitWarnings.map((w) =>
    report.unplaced({
      code: w.code,
      severity: "warning",
      message: w.message,
      hint: `set ${w.variable} to a whole number, or unset it`,
    }),
  );
  if (source.syntax.length > 0) {
    for (const problem of source.syntax.slice(0, 20)) {
      found.push(
        report.atRange(source.pathAt(problem.offset), problem.offset, problem.length, {
          code: "pipeline_json_syntax",
          message: `invalid JSON: ${problem.message}`,
          hint: "a pipeline file is strict JSON: double-quoted names and strings, no comments, no trailing commas",
        }),
      );
    }
    report.stage("load", found);
    return null;
  }
  for (const dup of source.duplicates) {
    const first = report.position(dup.firstOffset, dup.key.length + 2);
    found.push(
      report.atRange([...dup.path, dup.key], dup.offset, dup.length, {
        code: "pipeline_duplicate_key",
        message: `"${dup.key}" is given twice in the same object; only the last would count`,
        notes: [{ message: `first given here`, file: report.file, line: first.line }],
        hint: `keep one "${dup.key}"`,
      }),
    );
  }
  const parsed = pipelineDefinitionSchema(limits).safeParse(source.value);
  if (!parsed.success) {
    found.push(...schemaDiagnostics(report, source.value, parsed.error.issues, limits));
    report.stage("load", found);
    return null;
  }
  const definition = parsed.data;
  if (definition.nodes.length > limits.nodeNotice) {
    found.push(
      report.at(["nodes"], {
        code: "pipeline_many_nodes",
        severity: "warning",
        message: `the pipeline has ${definition.nodes.length} nodes; above ${limits.nodeNotice} a run is hard to follow and to review`,
        hint: "consider splitting it into smaller pipelines",
      }),
    );
  }
  definition.nodes.forEach((node, i) => {
    const at = (field: string, extra: JsonPath = []): JsonPath => ["nodes", i, field, ...extra];
    if (
      (node.permission_mode === "bounded" && node.skip_permissions === true) ||
      (node.permission_mode === "yolo" && node.skip_permissions === false)
    ) {
      found.push(
        report.at(at("skip_permissions"), {
          code: "pipeline_permissions_conflict",
          node: node.id,
          message: `node "${node.id}": skip_permissions is ${node.skip_permissions} but permission_mode is "${node.permission_mode}", which ${node.permission_mode === "yolo" ? "skips" : "keeps"} permission prompts`,
          hint: "remove skip_permissions (it is derived from permission_mode), or change one of them",
        }),
      );
    }
    if (node.output_schema === null) return;
    const problems = checkOutputSchema(node.output_schema);
    for (const problem of problems) {
      found.push(
        report.at(
          at("output_schema", problem.path),
          {
            code: "pipeline_output_schema_unsupported",
            node: node.id,
            message: `node "${node.id}": ${problem.message}`,
            hint: "output_schema supports type, properties, required, items and enum (additionalProperties only as an annotation)",
          },
          problem.key,
        ),
      );
    }
    if (problems.length === 0 && !declaredFields(node.output_schema as OutputSchema).has("summary")) {
      found.push(
        report.at(at("output_schema"), {
          code: "pipeline_output_schema_no_summary",
          severity: "warning",
          node: node.id,
          message: `node "${node.id}": the output_schema declares no "summary"; {{upstream_summaries}} and run listings show "(no summary)" for this node`,
          hint: 'add "summary": {"type": "string"} to properties (and to required)',
        }),
      );
    }
  });
  return report.stage("load", found) ? definition : null;
}

/** "did you mean" for a misspelt choice (`"fail-fast"` → `"fail_fast"`). */
function suggestionFor(value: unknown, path: JsonPath): string | null {
  if (typeof value !== "string") return null;
  const field = path.at(-1);
  const choices: Record<string, readonly string[]> = {
    failure_policy: FAILURE_POLICIES,
    effort: EFFORTS,
    permission_mode: PERMISSION_MODES,
  };
  const options = typeof field === "string" ? choices[field] : undefined;
  const suggestion = options === undefined ? null : closest(value, options);
  return suggestion === null ? null : `did you mean "${suggestion}"?`;
}

function schemaDiagnostics(
  report: PipelineReportBuilder,
  root: unknown,
  issues: readonly z.core.$ZodIssue[],
  limits: PipelineLimits,
): Found[] {
  const out: Found[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const path = issue.path.filter((s): s is string | number => typeof s !== "symbol");
    const node = nodeLabel(root, path);
    const where = node === null || path.length <= 2 ? "" : `${node.label}: `;
    if (issue.code === "unrecognized_keys") {
      const known = path.length === 0 ? DEFINITION_FIELDS : NODE_FIELDS;
      for (const key of issue.keys) {
        const lifecycle = path.length === 0 && LIFECYCLE_FIELDS.includes(key);
        const suggestion = closest(key, known);
        out.push(
          report.at(
            [...path, key],
            {
              code: "pipeline_unknown_field",
              node: node?.id ?? null,
              message: `unknown field "${key}" in ${node === null ? "the pipeline" : node.label}`,
              hint: lifecycle
                ? `"${key}" belongs to the store (status, revision, source and locked are kept beside the definition, not in it): remove it`
                : suggestion !== null
                  ? `did you mean "${suggestion}"?`
                  : `the fields are: ${known.join(", ")}`,
            },
            true,
          ),
        );
      }
      continue;
    }
    const key = `${path.join("/")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const value = valueAt(root, path);
    const field = fieldName(path);
    const want = expected(path, limits);
    const fields = { node: node?.id ?? null };
    if (value === undefined) {
      const parent = path.slice(0, -1);
      const owner = parent.length === 0 || node === null ? "the pipeline" : node.label;
      out.push(
        report.at(path, {
          ...fields,
          code: "pipeline_field_missing",
          message: `${owner} has no "${field}": expected ${want}`,
          hint: `add "${String(path.at(-1))}"`,
        }),
      );
    } else if (path.length === 1 && path[0] === "nodes" && Array.isArray(value)) {
      const tooMany = value.length > limits.maxNodes;
      out.push(
        report.at(path, {
          code: tooMany ? "pipeline_too_many_nodes" : "pipeline_no_nodes",
          message: tooMany
            ? `the pipeline has ${value.length} nodes, more than the limit of ${limits.maxNodes}`
            : "the pipeline has no nodes; it needs at least one",
          hint: tooMany
            ? `split it into smaller pipelines, or ask an administrator to raise ${LIMIT_ENV.maxNodes}`
            : "add a node with id, name and prompt_template",
        }),
      );
    } else if (path.length === 3 && path[2] === "runtime" && typeof value === "string") {
      const suggestion = closest(value, RUNTIMES);
      out.push(
        report.at(path, {
          ...fields,
          code: "pipeline_unknown_runtime",
          message: `${where}unknown runtime "${value}": expected ${want}`,
          hint:
            suggestion === null ? "use auto to run the profile's own kind" : `did you mean "${suggestion}"?`,
        }),
      );
    } else {
      out.push(
        report.at(path, {
          ...fields,
          code: "pipeline_field_invalid",
          message:
            path.length === 0
              ? `a pipeline definition must be a JSON object, found ${describe(value)}`
              : `${where}${field} must be ${want}, found ${describe(value)}`,
          hint:
            path.length === 0
              ? 'start from {"name": "…", "nodes": [{"id": "…", "name": "…", "prompt_template": "…"}]}'
              : (suggestionFor(value, path) ?? `write ${want} (docs/pipelines.md lists the fields)`),
        }),
      );
    }
  }
  return out;
}
