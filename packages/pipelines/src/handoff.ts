import { DEFAULT_OUTPUT_SCHEMA, type JsonType, type OutputSchema } from "./output-schema";

/** A node's structured handoff: a JSON object (the default schema requires a string `summary`). */
export type Handoff = Record<string, unknown>;

/** One mismatch between a handoff and its schema, at a `$`-rooted path (`$.artifacts[2]`). */
export interface HandoffProblem {
  path: string;
  message: string;
}

export type HandoffCheck =
  | { ok: true; handoff: Handoff }
  | {
      ok: false;
      problems: HandoffProblem[];
      /** Problems beyond the first 50, not listed. */
      omitted: number;
      /** The problems as lines (`$.artifacts[2]: expected string, got number`), to send back to the agent. */
      text: string;
    };

export const MAX_HANDOFF_PROBLEMS = 50;

/**
 * Checks a handoff against a schema of the supported subset: `type`, `properties`, `required`, `items` and
 * `enum` are enforced; `additionalProperties` is not (an annotation, as the reference says). The messages
 * name the place and what was expected and found, so that an agent can correct its handoff.
 *
 * @example
 * checkHandoff({ summary: "done", artifacts: ["a", 2] });
 * // → { ok: false, problems: [{ path: "$.artifacts[1]", message: "expected string, got number" }], … }
 */
export function checkHandoff(value: unknown, schema: OutputSchema = DEFAULT_OUTPUT_SCHEMA): HandoffCheck {
  const problems: HandoffProblem[] = [];
  let omitted = 0;
  const report = (path: string, message: string) => {
    if (problems.length < MAX_HANDOFF_PROBLEMS) problems.push({ path, message });
    else omitted++;
  };
  const visit = (node: unknown, s: OutputSchema, path: string): void => {
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some((t) => hasType(node, t))) {
        report(path, `expected ${types.join(" or ")}, got ${typeName(node)}`);
        return;
      }
    }
    if (s.enum !== undefined && !s.enum.some((option) => sameJson(option, node))) {
      const options = s.enum.map((option) => JSON.stringify(option)).join(", ");
      report(path, `expected one of ${options}, got ${JSON.stringify(node) ?? typeName(node)}`);
      return;
    }
    if (isRecord(node)) {
      for (const name of s.required ?? []) {
        if (!Object.hasOwn(node, name)) report(path, `missing required field "${name}"`);
      }
      for (const [name, sub] of Object.entries(s.properties ?? {})) {
        if (Object.hasOwn(node, name)) visit(node[name], sub, childPath(path, name));
      }
    }
    if (Array.isArray(node) && s.items !== undefined) {
      node.forEach((item, index) => {
        visit(item, s.items!, `${path}[${index}]`);
      });
    }
  };
  if (!isRecord(value)) {
    report("$", `expected object, got ${typeName(value)}: a handoff is a JSON object`);
  } else visit(value, schema, "$");
  if (problems.length === 0) return { ok: true, handoff: value as Handoff };
  const lines = problems.map((p) => `${p.path}: ${p.message}`);
  if (omitted > 0) lines.push(`… and ${omitted} more`);
  return { ok: false, problems, omitted, text: lines.join("\n") };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "null":
      return value === null;
    default:
      return typeof value === type;
  }
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (value === undefined) return "nothing";
  return typeof value;
}

function childPath(path: string, name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}
