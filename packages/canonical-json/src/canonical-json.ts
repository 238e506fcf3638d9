import { WorkflowError } from "@icode/workflow-errors";

/**
 * Canonical JSON (clarification 23): object keys sorted by code point, compact separators, UTF-8 text (no
 * `\u` escapes beyond what JSON requires), `-0` written as `0`, no NaN or infinities. Object members whose
 * value is `undefined` are left out, as `JSON.stringify` does; every other non-JSON value (a top-level or
 * array `undefined`, functions, symbols, bigints, dates, maps, class instances, cycles) throws a
 * `WorkflowError` coded `not_canonical_json` naming where it is.
 *
 * The engine writes one canonical line per event, several per node, so this is on the hot path: a part of
 * the value whose keys already enumerate in order (a parsed value, an object built in order) is written by
 * the native `JSON.stringify`; objects whose keys are out of order are written here, with the sorted key
 * list remembered per shape (events of one type share one). Whatever the fast path cannot vouch for (a
 * non-JSON value, very deep nesting) goes to the careful writer below, which gives the same text or the
 * error with its path.
 *
 * @example canonicalJson({ b: [1, "é"], a: null }) // → '{"a":null,"b":[1,"é"]}'
 */
export function canonicalJson(value: unknown): string {
  try {
    return encode(value, 0);
  } catch (error) {
    if (error !== CAREFUL) throw error;
    const out: string[] = [];
    write(value, "$", new Set(), out);
    return out.join("");
  }
}

/** Thrown inside the fast path: "let the careful writer handle (and describe) this value". */
const CAREFUL = Symbol("careful");

/** Deeper values take the careful path, which also finds cycles (the fast one only counts depth). */
const FAST_DEPTH = 200;

function encode(value: unknown, depth: number): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (Number.isFinite(value)) return JSON.stringify(value);
      throw CAREFUL;
    case "object":
      break;
    default:
      throw CAREFUL;
  }
  if (value === null) return "null";
  if (ready(value, depth)) return JSON.stringify(value);
  if (depth > FAST_DEPTH) throw CAREFUL;
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) throw CAREFUL;
      text += i === 0 ? encode(value[i], depth + 1) : `,${encode(value[i], depth + 1)}`;
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = "{";
  for (const key of sortedKeys(Object.keys(record))) {
    const member = record[key];
    if (member === undefined) continue;
    text += `${text.length === 1 ? "" : ","}${keyText(key)}${encode(member, depth + 1)}`;
  }
  return `${text}}`;
}

/**
 * Whether `JSON.stringify(value)` is already its canonical JSON: every object's keys enumerate in code
 * point order (as objects parsed from canonical JSON, or built in that order, do) and everything is JSON.
 * `false` as soon as an object's keys are out of order (the caller writes that one itself); throws
 * `CAREFUL` for what is not JSON.
 */
function ready(value: object, depth: number): boolean {
  if (depth > FAST_DEPTH) throw CAREFUL;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (!readyMember(item, depth)) return false;
      if (item === undefined) throw CAREFUL;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw CAREFUL;
  let previous: string | null = null;
  for (const key in value) {
    if (previous !== null && compareCodePoints(previous, key) >= 0) return false;
    previous = key;
    if (!readyMember((value as Record<string, unknown>)[key], depth)) return false;
  }
  return true;
}

function readyMember(member: unknown, depth: number): boolean {
  switch (typeof member) {
    case "string":
    case "boolean":
    case "undefined":
      return true;
    case "number":
      if (Number.isFinite(member)) return true;
      throw CAREFUL;
    case "object":
      return member === null || ready(member, depth + 1);
    default:
      throw CAREFUL;
  }
}

/** Sorted key lists by unsorted key list: objects of one shape (events of one type) sort their keys once. */
const orders = new Map<string, readonly string[]>();
/** `"key":` by key. */
const keyTexts = new Map<string, string>();
const CACHE_LIMIT = 4096;

function sortedKeys(keys: string[]): readonly string[] {
  if (keys.length < 2) return keys;
  const shape = keys.join("\u0000");
  let order = orders.get(shape);
  if (order === undefined) {
    order = keys.sort(compareCodePoints);
    if (orders.size < CACHE_LIMIT) orders.set(shape, order);
  }
  return order;
}

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = `${JSON.stringify(key)}:`;
    if (keyTexts.size < CACHE_LIMIT && key.length <= 64) keyTexts.set(key, text);
  }
  return text;
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
