import { PipelineError } from "./codes";
import type { JsonPath } from "./json-pointer";

/** The JSON Schema keywords an `output_schema` may use (the reference's "Handoff and output_schema"). */
export const OUTPUT_SCHEMA_KEYWORDS = [
  "type",
  "properties",
  "required",
  "items",
  "enum",
  "additionalProperties",
] as const;

/** The JSON types `type` may name. */
export const JSON_TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
export type JsonType = (typeof JSON_TYPES)[number];

/**
 * A handoff schema in the supported subset. `additionalProperties` is an annotation: it may be present, and
 * is never enforced (the reference: "do not rely on it to reject extra fields").
 */
export interface OutputSchema {
  type?: JsonType | JsonType[];
  properties?: Record<string, OutputSchema>;
  required?: string[];
  items?: OutputSchema;
  enum?: unknown[];
  additionalProperties?: boolean | OutputSchema;
}

/** The handoff schema of a node whose `output_schema` is `null` (the reference's default). */
export const DEFAULT_OUTPUT_SCHEMA: OutputSchema = deepFreeze({
  type: "object",
  properties: {
    summary: { type: "string" },
    artifacts: { type: "array", items: { type: "string" } },
    notes: { type: "string" },
  },
  required: ["summary"],
});

/** One way a schema leaves the subset, at `path` inside the schema. */
export interface OutputSchemaProblem {
  path: JsonPath;
  /** Whether the problem is a keyword's name (an unsupported keyword) rather than its value. */
  key: boolean;
  message: string;
}

const KEYWORD_LIST = OUTPUT_SCHEMA_KEYWORDS.join(", ");

/**
 * The places where `schema` leaves the supported subset: the root must be `{"type": "object", …}`; every
 * schema is an object using only the subset's keywords, each of the right shape. Empty when it fits.
 */
export function checkOutputSchema(schema: unknown): OutputSchemaProblem[] {
  const problems: OutputSchemaProblem[] = [];
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (!isRecord(node)) {
      problems.push({
        path,
        key: false,
        message: `a schema must be a JSON object, found ${describe(node)} (boolean schemas are not supported)`,
      });
      return;
    }
    for (const [keyword, value] of Object.entries(node)) {
      const at = [...path, keyword];
      switch (keyword) {
        case "type": {
          const types = Array.isArray(value) ? value : [value];
          const bad = types.filter((t) => !(JSON_TYPES as readonly unknown[]).includes(t));
          if (types.length === 0 || bad.length > 0 || new Set(types).size !== types.length) {
            problems.push({
              path: at,
              key: false,
              message: `"type" must be one of ${JSON_TYPES.join(", ")} (or a list of distinct ones), found ${describe(value)}`,
            });
          }
          break;
        }
        case "properties":
          if (!isRecord(value)) {
            problems.push({
              path: at,
              key: false,
              message: `"properties" must be an object of schemas, found ${describe(value)}`,
            });
          } else for (const [name, sub] of Object.entries(value)) visit(sub, [...at, name]);
          break;
        case "required":
          if (
            !Array.isArray(value) ||
            value.some((v) => typeof v !== "string") ||
            new Set(value).size !== value.length
          ) {
            problems.push({
              path: at,
              key: false,
              message: `"required" must be a list of distinct field names, found ${describe(value)}`,
            });
          }
          break;
        case "items":
          if (Array.isArray(value)) {
            problems.push({
              path: at,
              key: false,
              message: `"items" must be one schema for every element; tuple forms (a list of schemas) are not supported`,
            });
          } else visit(value, at);
          break;
        case "enum":
          if (!Array.isArray(value) || value.length === 0) {
            problems.push({
              path: at,
              key: false,
              message: `"enum" must be a non-empty list of values, found ${describe(value)}`,
            });
          }
          break;
        case "additionalProperties":
          if (typeof value !== "boolean") visit(value, at);
          break;
        default:
          problems.push({
            path: at,
            key: true,
            message: `keyword "${keyword}" is not supported in an output_schema; the supported subset is ${KEYWORD_LIST}`,
          });
      }
    }
  };
  if (!isRecord(schema) || schema["type"] !== "object") {
    const found = isRecord(schema)
      ? `"type": ${schema["type"] === undefined ? "missing" : JSON.stringify(schema["type"])}`
      : describe(schema);
    problems.push({
      path: isRecord(schema) && schema["type"] !== undefined ? ["type"] : [],
      key: false,
      message: `the root of an output_schema must be {"type": "object", …} (a handoff is a JSON object), found ${found}`,
    });
    if (!isRecord(schema)) return problems;
  }
  visit(schema, []);
  return problems;
}

/** The top-level fields a schema in the subset declares: its `properties` and its `required` names. */
export function declaredFields(schema: OutputSchema): Set<string> {
  return new Set([...Object.keys(schema.properties ?? {}), ...(schema.required ?? [])]);
}

/** A short description of a JSON value for messages: `a string ("x")`, `a number (3)`, `an array`. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  const text = JSON.stringify(value);
  const shown = text.length > 40 ? `${text.slice(0, 37)}…` : text;
  return `${typeof value === "string" ? "a string" : typeof value === "number" ? "a number" : "a boolean"} (${shown})`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/**
 * The schema a node's handoff is checked against: its `output_schema`, or the default one. Throws when the
 * `output_schema` is outside the subset (validation refuses such a definition before it can run).
 */
export function handoffSchemaOf(node: {
  id: string;
  output_schema: Record<string, unknown> | null;
}): OutputSchema {
  if (node.output_schema === null) return DEFAULT_OUTPUT_SCHEMA;
  const problems = checkOutputSchema(node.output_schema);
  if (problems.length > 0) {
    throw new PipelineError(
      "pipeline_definition_invalid",
      `node "${node.id}": the output_schema is outside the supported subset: ${problems[0]!.message}`,
      { hint: "validate the pipeline (icode pipeline validate) to see every problem" },
    );
  }
  return node.output_schema as OutputSchema;
}
