import { WorkflowError } from "@icode/workflow-errors";

/**
 * Canonical JSON (clarification 23): object keys sorted by code point, compact separators, UTF-8 text (no
 * `\u` escapes beyond what JSON requires), `-0` written as `0`, no NaN or infinities. Object members whose
 * value is `undefined` are left out, as `JSON.stringify` does; every other non-JSON value (a top-level or
 * array `undefined`, functions, symbols, bigints, dates, maps, class instances, cycles) throws a
 * `WorkflowError` coded `not_canonical_json` naming where it is.
 *
 * The engine writes one canonical line per event, several per node, so this is on the hot path. The value
 * is first checked and, where an object's keys are out of order, shallow-copied with sorted keys; then the
 * native `JSON.stringify` writes it. Whatever that fast path cannot vouch for (a non-JSON value, very deep
 * nesting, array-index keys out of code point order, which V8 always enumerates first) goes to the careful
 * writer below, which gives the same text or the error with its path.
 *
 * @example canonicalJson({ b: [1, "é"], a: null }) // → '{"a":null,"b":[1,"é"]}'
 */
export function canonicalJson(value: unknown): string {
  let prepared: unknown;
  try {
    prepared = prepare(value, 0);
  } catch (error) {
    if (error !== CAREFUL) throw error;
    const out: string[] = [];
    write(value, "$", new Set(), out);
    return out.join("");
  }
  return JSON.stringify(prepared);
}

/** Thrown inside the fast path: "let the careful writer handle (and describe) this value". */
const CAREFUL = Symbol("careful");

/** Deeper values take the careful path, which also finds cycles (the fast one only counts depth). */
const FAST_DEPTH = 200;

/** Keys V8 enumerates before all others, in numeric order, whatever the order they were added in. */
const INDEX_LIKE = /^\d+$/;

/**
 * `value` itself when `JSON.stringify(value)` is already canonical, else a copy (sharing what needs no
 * change) whose `JSON.stringify` is. Throws `CAREFUL` for anything else.
 */
function prepare(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (Number.isFinite(value)) return value;
      throw CAREFUL;
    case "object":
      break;
    default:
      throw CAREFUL;
  }
  if (value === null) return null;
  if (depth > FAST_DEPTH) throw CAREFUL;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined) throw CAREFUL;
      const ready = prepare(item, depth + 1);
      if (copy === null && ready !== item) copy = value.slice(0, i);
      copy?.push(ready);
    }
    return copy ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw CAREFUL;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let ordered = true;
  let changed = false;
  const ready: unknown[] = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (ordered && i > 0 && compareCodePoints(keys[i - 1]!, key) >= 0) ordered = false;
    const member = record[key];
    if (member === undefined) {
      ready[i] = undefined; // JSON.stringify leaves it out, as canonical JSON does
      continue;
    }
    const next = prepare(member, depth + 1);
    if (next !== member) changed = true;
    ready[i] = next;
  }
  if (ordered && !changed) return record;
  if (ordered) {
    const copy: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) copy[keys[i]!] = ready[i];
    return copy;
  }
  const order = keys.map((_, i) => i).sort((a, b) => compareCodePoints(keys[a]!, keys[b]!));
  const copy: Record<string, unknown> = {};
  for (const i of order) {
    const key = keys[i]!;
    if (INDEX_LIKE.test(key)) throw CAREFUL; // V8 would move it to the front again
    if (ready[i] !== undefined) copy[key] = ready[i];
  }
  return copy;
}

/** Code point order of two strings (UTF-16 unit order, except astral characters against U+E000..U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
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

/** The careful writer: any value, any depth; names the path of what is not JSON. */
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
      if (!Number.isFinite(value)) {
        throw notCanonical(`${where} is ${value}`, "Replace NaN and infinities with null or a string.");
      }
      out.push(JSON.stringify(value));
      return;
    case "object":
      break;
    default:
      throw notCanonical(`${where} is a ${typeof value}`, "Only JSON values can be written.");
  }
  const object = value as object;
  if (seen.has(object)) throw notCanonical(`${where} refers to itself`, "Write trees, not cycles.");
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
      throw notCanonical(
        `${where} is a ${object.constructor?.name ?? "non-plain object"}`,
        "Convert it to a plain object, array, string, number, boolean or null first.",
      );
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

function notCanonical(found: string, hint: string): WorkflowError<"not_canonical_json"> {
  return new WorkflowError("not_canonical_json", `Cannot write canonical JSON: ${found}.`, { hint });
}
