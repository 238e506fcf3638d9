import { createHash } from "node:crypto";
import { WorkflowError } from "@icode/workflow-errors";
import { compareCodePoints } from "./options";

/** Lowercase hex SHA-256 of bytes, or of a string's UTF-8 encoding. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Canonical JSON for digests (clarification 23): object keys sorted in code point order, no whitespace,
 * strings left as UTF-8 (not `\u`-escaped), `-0` written as `0`. Only JSON values are accepted: NaN,
 * infinities, `undefined`, functions, symbols, bigints and non-plain objects (dates, maps, class instances)
 * throw a `WorkflowError` with code `not_canonical_json`, so a digest never silently covers a lossy copy.
 *
 * @example canonicalJson({ b: [1, "é"], a: null }) // → '{"a":null,"b":[1,"é"]}'
 */
export function canonicalJson(value: unknown): string {
  return write(value, "$", new Set());
}

function write(value: unknown, where: string, seen: Set<object>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw notCanonical(`${where} is ${value}`, "Replace NaN and infinities with null or a string.");
      }
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw notCanonical(`${where} is a ${typeof value}`, "Digests cover JSON values only.");
  }
  const object = value as object;
  if (seen.has(object)) throw notCanonical(`${where} refers to itself`, "Digests cover trees, not cycles.");
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      const items: string[] = [];
      for (let i = 0; i < object.length; i++) items.push(write(object[i], `${where}[${i}]`, seen));
      return `[${items.join(",")}]`;
    }
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      throw notCanonical(
        `${where} is a ${object.constructor?.name ?? "non-plain object"}`,
        "Convert it to a plain object, array, string, number, boolean or null first.",
      );
    }
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record).sort(compareCodePoints);
    const members = keys.map(
      (key) => `${JSON.stringify(key)}:${write(record[key], `${where}.${key}`, seen)}`,
    );
    return `{${members.join(",")}}`;
  } finally {
    seen.delete(object);
  }
}

function notCanonical(found: string, hint: string): WorkflowError<"not_canonical_json"> {
  return new WorkflowError("not_canonical_json", `Cannot write canonical JSON: ${found}.`, { hint });
}

/** SHA-256 of a value's canonical JSON: the definition digest and the environment fingerprint use it. */
export function jsonDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * The digest of a workflow folder (clarification 23): SHA-256 of the canonical JSON of the
 * `[relative path with "/", sha256 of content]` pairs, sorted by path in code point order. The caller
 * leaves out names starting with `.` and `__pycache__` bytecode, as `readTarget` does.
 *
 * @example folderDigest([{ relPath: "a.py", sha256: "…" }]) // → sha256Hex('[["a.py","…"]]')
 */
export function folderDigest(files: ReadonlyArray<{ relPath: string; sha256: string }>): string {
  const pairs = files
    .map((file): [string, string] => [file.relPath, file.sha256])
    .sort((a, b) => compareCodePoints(a[0], b[0]));
  return sha256Hex(canonicalJson(pairs));
}
