import type { z } from "zod";
import { describeValue, type ProblemSink } from "../problems";
import { childPath, type YamlSource } from "../yaml-source";

/** What breaking a field's rule does: `error` skips the whole profile, `warning` falls back to the default. */
export type Effect = "error" | "warning";

export interface FieldRule {
  /** Effect of a value the field's schema rejects. */
  invalid?: Effect;
  /** Effect of a value of the wrong type (`"x"` for a number), when it differs from `invalid`. */
  wrongType?: Effect;
  /** What is expected, in words, where zod's words would be unclear (unions). */
  expected?: string;
  /** A custom reader: returns the accepted input value, or `DROP` to leave the field out. */
  read?: (r: Reader, value: unknown, field: string) => unknown;
}

export const DROP: unique symbol = Symbol("drop");

/** A value kept only for the canonical rewrite of a user file (silently accepted keys, unknown kinds). */
export interface Kept {
  path: readonly string[];
  value: unknown;
}

/** State of reading one file: where problems go, the YAML lines, what the rewrite must keep. */
export interface Reader {
  sink: ProblemSink;
  source: YamlSource;
  kept: Kept[];
  /** Said after a load error: "the profile is not loaded". */
  errorEffect: string;
}

export interface ObjectSpec {
  schema: z.ZodObject;
  /** Effect for fields without their own rule. */
  invalid: Effect;
  rules?: Record<string, FieldRule>;
  /** Keys accepted silently with no effect (kept on rewrite). */
  silent?: readonly string[];
  /** Known keys that are ignored with a notice, and the notice. */
  ignored?: Readonly<Record<string, string>>;
  /** Keys the caller handles itself. */
  skip?: readonly string[];
}

/**
 * Warns when a field that does not resolve `{{NAME}}` contains one: it is sent as written, which is rarely
 * what was meant. `where` lists the fields of this section that do resolve templates.
 */
export function warnLiteralTemplates(r: Reader, value: unknown, field: string, where: string): void {
  const strings =
    typeof value === "string"
      ? [value]
      : Array.isArray(value)
        ? value.filter((v) => typeof v === "string")
        : [];
  const found = strings.flatMap((s) =>
    Array.from(s.matchAll(/\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/gu), (m) => m[0]),
  );
  if (found.length === 0) return;
  r.sink.warn(
    "config_template_literal",
    field,
    `${found[0]} is not replaced in this field and is used as written; templates are resolved only in ${where}`,
  );
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads one mapping field by field: each known key is checked with its own schema from `spec.schema`, and
 * a rejected value is reported with the effect of its rule. Returns the accepted input values only, so
 * parsing the result with the section's schema fills in defaults for everything that was dropped.
 */
export function readObject(
  r: Reader,
  raw: Record<string, unknown>,
  field: string,
  spec: ObjectSpec,
): Record<string, unknown> {
  const shape = spec.schema.shape as Record<string, z.ZodType>;
  const accepted: Record<string, unknown> = {};
  const before = r.sink.problems.length;
  for (const [key, value] of Object.entries(raw)) {
    const path = childPath(field, key);
    if (spec.skip?.includes(key)) continue;
    if (spec.silent?.includes(key)) {
      r.kept.push({ path: path.split("."), value });
      continue;
    }
    const notice = spec.ignored?.[key];
    if (notice !== undefined) {
      r.sink.warn("config_key_ignored", path, notice);
      continue;
    }
    const schema = shape[key];
    if (schema === undefined || r.source.keyNotString(path)) {
      r.sink.warn("config_unknown_key", path, unknownKeyMessage(key, Object.keys(shape)));
      continue;
    }
    const rule = spec.rules?.[key] ?? {};
    if (rule.read !== undefined) {
      const out = rule.read(r, value, path);
      if (out !== DROP) accepted[key] = out;
      continue;
    }
    const value2 = checkField(r, schema, value, path, { invalid: spec.invalid, ...rule });
    if (value2 !== DROP) accepted[key] = value2;
  }
  const reported = new Set(r.sink.problems.slice(before).map((p) => p.field));
  for (const [key, schema] of Object.entries(shape)) {
    const path = childPath(field, key);
    if (key in accepted || reported.has(path) || spec.skip?.includes(key)) continue;
    if (schema.safeParse(undefined).success) continue;
    const effect = spec.rules?.[key]?.invalid ?? spec.invalid;
    const tail = effect === "error" ? r.errorEffect : "the entry is ignored";
    r.sink.add("config_field_invalid", effect, path, `"${key}" is required; ${tail}`);
  }
  return accepted;
}

/**
 * Reads a section that must be a mapping: `null` counts as not written; anything else that is not a mapping
 * is reported with `effect` and the section keeps its defaults.
 */
export function readSection(
  r: Reader,
  value: unknown,
  field: string,
  effect: Effect,
  read: (mapping: Record<string, unknown>) => unknown,
): unknown {
  if (value === null) return DROP;
  if (!isMapping(value)) {
    const tail = effect === "error" ? r.errorEffect : "the section keeps its defaults";
    r.sink.add(
      "config_field_invalid",
      effect,
      field,
      `expected a mapping, found ${describeValue(value)}; ${tail}`,
    );
    return DROP;
  }
  return read(value);
}

/** Reads a list of mappings, each with `readItem`; null counts as not written. */
export function readList(
  r: Reader,
  value: unknown,
  field: string,
  effect: Effect,
  readItem: (item: Record<string, unknown>, field: string, index: number) => unknown,
): unknown {
  if (value === null) return DROP;
  if (!Array.isArray(value)) {
    const tail = effect === "error" ? r.errorEffect : "using the default []";
    r.sink.add(
      "config_field_invalid",
      effect,
      field,
      `expected a list, found ${describeValue(value)}; ${tail}`,
    );
    return DROP;
  }
  const out: unknown[] = [];
  value.forEach((item, index) => {
    const at = childPath(field, index);
    if (!isMapping(item)) {
      const tail = effect === "error" ? r.errorEffect : "the entry is ignored";
      r.sink.add(
        "config_field_invalid",
        effect,
        at,
        `expected a mapping, found ${describeValue(item)}; ${tail}`,
      );
      return;
    }
    const read = readItem(item, at, index);
    if (read !== DROP) out.push(read);
  });
  return out;
}

/** Checks one value with its schema; null counts as not written unless the schema accepts null. */
export function checkField(
  r: Reader,
  schema: z.ZodType,
  value: unknown,
  field: string,
  rule: FieldRule & { invalid: Effect },
): unknown {
  const result = schema.safeParse(value);
  if (result.success) return value;
  if (value === null) return DROP;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const effect =
    issue.code === "invalid_type" && rule.wrongType !== undefined ? rule.wrongType : rule.invalid;
  report(r, effect, field, value, issue, rule.expected, schema);
  return DROP;
}

/** Reports a rejected value: `expected …, found …; <what happens>`. */
export function report(
  r: Reader,
  effect: Effect,
  field: string,
  value: unknown,
  issue: z.core.$ZodIssue,
  expected: string | undefined,
  schema: z.ZodType | null,
): void {
  const deep = innermost(issue);
  const at = deep.path.reduce<string>((p, k) => childPath(p, typeof k === "number" ? k : String(k)), field);
  const found = valueAt(value, deep.path);
  const what =
    expected !== undefined && deep.path.length === 0 ? `expected ${expected}` : issueText(deep, found);
  const tail =
    effect === "error" ? r.errorEffect : schema === null ? "the value is ignored" : fallbackText(schema);
  r.sink.add("config_field_invalid", effect, at, `${what}, found ${describeValue(found)}; ${tail}`);
}

/** The text after a warning: the default the field falls back to. */
export function fallbackText(schema: z.ZodType): string {
  const d = schema.safeParse(undefined);
  if (!d.success || d.data === undefined) return "the field is ignored";
  return `using the default ${JSON.stringify(d.data)}`;
}

function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code === "invalid_key" || issue.code === "invalid_element") {
    const inner = issue.issues[0];
    if (inner !== undefined) {
      const nested = innermost(inner);
      return { ...nested, path: [...issue.path, ...nested.path] } as z.core.$ZodIssue;
    }
  }
  return issue;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  boolean: "true or false",
  number: "a number",
  int: "an integer",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
};

function issueText(issue: z.core.$ZodIssue, found: unknown): string {
  switch (issue.code) {
    case "invalid_type":
      if (found === undefined) return "the field is required";
      return `expected ${TYPE_WORDS[issue.expected] ?? issue.expected}`;
    case "invalid_value":
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "too_small":
      if (issue.origin === "string")
        return Number(issue.minimum) <= 1
          ? "expected a non-empty string"
          : `expected at least ${issue.minimum} characters`;
      if (issue.origin === "array") return `expected at least ${issue.minimum} items`;
      return `expected a number ${issue.inclusive ? ">=" : ">"} ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `expected at most ${issue.maximum} characters`;
      if (issue.origin === "array") return `expected at most ${issue.maximum} items`;
      return `expected a number ${issue.inclusive ? "<=" : "<"} ${issue.maximum}`;
    case "invalid_union":
      return "expected a different kind of value";
    default:
      return issue.message.startsWith("Invalid") ? `invalid value (${issue.message})` : issue.message;
  }
}

function unknownKeyMessage(key: string, known: string[]): string {
  const near = known.find((k) => k.toLowerCase() === key.toLowerCase() || editDistance(k, key) <= 2);
  const hint = near === undefined ? "" : ` Did you mean "${near}"?`;
  return `unknown key "${key}" is ignored; known keys here: ${known.join(", ")}.${hint}`;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}
