import { WorkflowError } from "@icode/workflow-errors";

/**
 * Canonical JSON (clarification 23), as written to every JSON file of a run directory and every line of
 * `events.jsonl`: object keys sorted by code point, compact separators, UTF-8 text (no `\u` escapes beyond
 * what JSON requires), no NaN or infinities. Object members whose value is `undefined` are left out, as
 * `JSON.stringify` does; every other non-JSON value throws a `WorkflowError` coded `not_canonical_json`.
 *
 * @example canonicalJson({ b: [1, "é"], a: null }) // → '{"a":null,"b":[1,"é"]}'
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, "$", new Set(), out);
  return out.join("");
}

function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // UTF-16 unit order is code point order, except a surrogate (an astral character) against a unit in
      // U+E000..U+FFFF: the astral character is the larger code point.
      const xSurrogate = x >= 0xd800 && x <= 0xdfff;
      const ySurrogate = y >= 0xd800 && y <= 0xdfff;
      if (xSurrogate && !ySurrogate && y >= 0xe000) return 1;
      if (ySurrogate && !xSurrogate && x >= 0xe000) return -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

function write(value: unknown, where: string, seen: Set<object>, out: string[]): void {
  if (value === null) {
    out.push("null");
    return;
  }
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(value)) throw notCanonical(`${where} is ${value}`);
      out.push(JSON.stringify(value));
      return;
    case "object":
      break;
    default:
      throw notCanonical(`${where} is a ${typeof value}`);
  }
  const object = value as object;
  if (seen.has(object)) throw notCanonical(`${where} refers to itself`);
  seen.add(object);
  if (Array.isArray(object)) {
    out.push("[");
    for (let i = 0; i < object.length; i++) {
      if (i > 0) out.push(",");
      write(object[i], `${where}[${i}]`, seen, out);
    }
    out.push("]");
  } else {
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      throw notCanonical(`${where} is a ${object.constructor?.name ?? "non-plain object"}`);
    }
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort(compareCodePoints);
    out.push("{");
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (i > 0) out.push(",");
      out.push(JSON.stringify(key), ":");
      write(record[key], `${where}.${key}`, seen, out);
    }
    out.push("}");
  }
  seen.delete(object);
}

function notCanonical(found: string): WorkflowError<"not_canonical_json"> {
  return new WorkflowError("not_canonical_json", `Cannot write canonical JSON: ${found}.`, {
    hint: "Records hold JSON values only: replace NaN and infinities with null, and convert other objects to plain ones.",
  });
}
