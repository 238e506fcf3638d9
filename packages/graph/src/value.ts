import { z } from "zod";

/** One message between processes, UTF-8 encoded, including what the framework adds. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** `data` is level 0; each list element or dictionary value is one level deeper. Level 64 is allowed. */
export const MAX_DATA_DEPTH = 64;
/** Every value in `data` counts, containers and scalars alike; dictionary keys do not. */
export const MAX_DATA_VALUES = 200_000;
/** One string in `text` or `data`, in Unicode code points (Python's `len`). */
export const MAX_STRING_CHARS = 4_194_304;
/** Everything passed to one custom `combine`, measured as UTF-8 JSON (`text`, `data` and identifiers). */
export const MAX_COMBINE_INPUT_BYTES = 12 * 1024 * 1024;

/** A JSON value: string, finite number, boolean, null, array or string-keyed object of JSON values. */
export const JsonValueSchema = z.json();
export type JsonValue = z.infer<typeof JsonValueSchema>;

/** The value passed between nodes (`chrys.workflows.WorkflowValue`). */
export const WorkflowValueSchema = z.object({
  text: z.string(),
  data: JsonValueSchema.nullable(),
});
export type WorkflowValue = z.infer<typeof WorkflowValueSchema>;

/** One source's result as a custom `combine` receives it (`chrys.workflows.SourceValue`). */
export const SourceValueSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  value: WorkflowValueSchema,
});
export type SourceValue = z.infer<typeof SourceValueSchema>;

/** Why a returned value was refused. Neither is ever retried. */
export const VALUE_CODES = ["value_not_serializable", "value_too_large"] as const;
export type ValueCode = (typeof VALUE_CODES)[number];

export type ValueCheck = { ok: true; value: WorkflowValue } | { ok: false; code: ValueCode; message: string };

type Frame = { value: unknown; depth: number; parent: Frame | null; key: string | number };
type Task = Frame | { leave: object };

/** The JSON bytes of `{"text":` + `,"data":` + `}`. */
const ENVELOPE_BYTES = 17;

/**
 * Checks a value returned by a node or a custom `combine` against the spec's rules (clarifications 12, 13):
 * a string (taken as `{ text, data: null }`) or a plain `{ text, data }` object whose `data` (absent means
 * `null`) holds only JSON values: finite numbers, well-formed strings, arrays and plain objects, no cycles.
 * `data` may nest 64 levels deep (level 0 is `data` itself) and hold 200,000 values; a string may hold
 * 4,194,304 code points; the whole value must fit in 16 MiB as UTF-8 JSON. The first problem in document
 * order is reported. Iterative: any depth of input is safe.
 */
export function checkWorkflowValue(value: unknown): ValueCheck {
  if (typeof value === "string") value = { text: value, data: null };
  if (!isPlainObject(value)) {
    return refuse(
      "value_not_serializable",
      `a node must return a string or a WorkflowValue ({ text, data }), but it returned ${describe(value)}`,
    );
  }
  const fields = value as Record<string, unknown>;
  const extra = Object.keys(fields).find((key) => key !== "text" && key !== "data");
  if (extra !== undefined || Object.getOwnPropertySymbols(fields).length > 0) {
    return refuse(
      "value_not_serializable",
      `a WorkflowValue has only the fields text and data, but this one also has ${
        extra === undefined ? "a symbol key" : JSON.stringify(extra)
      }`,
    );
  }
  const text = fields["text"];
  if (typeof text !== "string") {
    return refuse(
      "value_not_serializable",
      `WorkflowValue.text must be a string, but it is ${describe(text)}`,
    );
  }
  let bytes = ENVELOPE_BYTES;
  const textProblem = checkString(text, "text", bytes);
  if (typeof textProblem !== "number") return textProblem;
  bytes += textProblem;
  const data = "data" in fields ? fields["data"] : null;

  let count = 0;
  const onPath = new Set<object>();
  const tasks: Task[] = [{ value: data, depth: 0, parent: null, key: "data" }];
  while (tasks.length > 0) {
    const task = tasks.pop()!;
    if ("leave" in task) {
      onPath.delete(task.leave);
      continue;
    }
    const item = task.value;
    count++;
    if (count > MAX_DATA_VALUES) return tooManyValues();
    if (task.depth > MAX_DATA_DEPTH) {
      return refuse(
        "value_too_large",
        `data is nested more than ${MAX_DATA_DEPTH} levels deep (at ${pathOf(task)}); data itself is level 0`,
      );
    }
    if (item === null) {
      bytes += 4;
    } else if (typeof item === "boolean") {
      bytes += item ? 4 : 5;
    } else if (typeof item === "number") {
      if (!Number.isFinite(item)) {
        return refuse(
          "value_not_serializable",
          `${pathOf(task)} is ${describe(item)}; only finite numbers are allowed`,
        );
      }
      bytes += numberBytes(item);
    } else if (typeof item === "string") {
      const size = checkString(item, pathOf(task), bytes);
      if (typeof size !== "number") return size;
      bytes += size;
    } else if (Array.isArray(item) && Object.getPrototypeOf(item) === Array.prototype) {
      if (onPath.has(item)) return refuse("value_not_serializable", `${pathOf(task)} contains itself`);
      if (count + item.length > MAX_DATA_VALUES) return tooManyValues();
      onPath.add(item);
      tasks.push({ leave: item });
      bytes += 2 + Math.max(0, item.length - 1);
      for (let at = item.length - 1; at >= 0; at--) {
        tasks.push({ value: item[at], depth: task.depth + 1, parent: task, key: at });
      }
    } else if (isPlainObject(item)) {
      if (onPath.has(item)) return refuse("value_not_serializable", `${pathOf(task)} contains itself`);
      if (Object.getOwnPropertySymbols(item).length > 0) {
        return refuse("value_not_serializable", `${pathOf(task)} has a symbol key; keys must be strings`);
      }
      const keys = Object.keys(item);
      if (count + keys.length > MAX_DATA_VALUES) return tooManyValues();
      onPath.add(item);
      tasks.push({ leave: item });
      bytes += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        if (hasLoneSurrogate(key)) {
          return refuse(
            "value_not_serializable",
            `${pathOf(task)} has the key ${JSON.stringify(key)} with a lone surrogate; strings must be valid Unicode`,
          );
        }
        bytes += stringBytes(key) + 1;
      }
      for (let at = keys.length - 1; at >= 0; at--) {
        const key = keys[at]!;
        tasks.push({
          value: (item as Record<string, unknown>)[key],
          depth: task.depth + 1,
          parent: task,
          key,
        });
      }
    } else {
      return refuse(
        "value_not_serializable",
        `${pathOf(task)} is ${describe(item)}; data holds only strings, finite numbers, booleans, null, lists and plain objects`,
      );
    }
    if (bytes > MAX_MESSAGE_BYTES) return tooManyBytes();
  }
  return { ok: true, value: { text, data: data as JsonValue | null } };
}

/**
 * The default merge of a node's inputs: no source → `null` (the node is skipped); one → its value
 * unchanged; several → `## <node_id>` + newline + text per source, in incoming-edge declaration order,
 * joined by one blank line, with no trailing newline and `data: null`.
 */
export function mergeSources(
  sources: readonly Pick<SourceValue, "node_id" | "value">[],
): WorkflowValue | null {
  if (sources.length === 0) return null;
  if (sources.length === 1) return sources[0]!.value;
  return {
    text: sources.map((source) => `## ${source.node_id}\n${source.value.text}`).join("\n\n"),
    data: null,
  };
}

/**
 * The size of the list a custom `combine` receives, as compact UTF-8 JSON of
 * `[{ node_id, activation_id, value: { text, data } }, …]`; compare it with {@link MAX_COMBINE_INPUT_BYTES}.
 */
export function combineInputBytes(sources: readonly SourceValue[]): number {
  return jsonByteLength(
    sources.map((source) => ({
      node_id: source.node_id,
      activation_id: source.activation_id,
      value: { text: source.value.text, data: source.value.data },
    })),
  );
}

/** The length of `JSON.stringify(value)` in UTF-8 bytes, computed without building the string. Iterative. */
export function jsonByteLength(value: JsonValue): number {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") {
      bytes += stringBytes(item);
    } else if (typeof item === "number") {
      bytes += Number.isFinite(item) ? numberBytes(item) : 4;
    } else if (typeof item === "boolean") {
      bytes += item ? 4 : 5;
    } else if (Array.isArray(item)) {
      bytes += 2 + Math.max(0, item.length - 1);
      for (const element of item) pending.push(element);
    } else if (typeof item === "object" && item !== null) {
      const keys = Object.keys(item);
      bytes += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        bytes += stringBytes(key) + 1;
        pending.push((item as Record<string, unknown>)[key]);
      }
    } else {
      bytes += 4;
    }
  }
  return bytes;
}

/** Checks one string; returns its JSON size in bytes, or the refusal. */
function checkString(text: string, where: string, bytesSoFar: number): number | ValueCheck {
  // Every code point takes at least one code unit and at least one byte, so these bounds are safe shortcuts.
  if (text.length > 2 * MAX_STRING_CHARS) return stringTooLong(where, null);
  if (bytesSoFar + text.length > MAX_MESSAGE_BYTES) return tooManyBytes();
  let codePoints = 0;
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    codePoints++;
    if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = text.charCodeAt(at + 1);
      if (unit > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) {
        return refuse(
          "value_not_serializable",
          `${where} holds a lone surrogate (\\u${unit.toString(16)}) at index ${at}; strings must be valid Unicode`,
        );
      }
      at++;
    }
  }
  if (codePoints > MAX_STRING_CHARS) return stringTooLong(where, codePoints);
  return stringBytes(text);
}

/** `codePoints` is `null` when the string was refused on its length in code units alone. */
function stringTooLong(where: string, codePoints: number | null): ValueCheck {
  const limit = MAX_STRING_CHARS.toLocaleString("en-US");
  const counted = codePoints === null ? "" : ` (${codePoints.toLocaleString("en-US")})`;
  return refuse(
    "value_too_large",
    `${where} holds more than ${limit} characters${counted}, the limit for one string`,
  );
}

function tooManyValues(): ValueCheck {
  return refuse(
    "value_too_large",
    `data holds more than ${MAX_DATA_VALUES.toLocaleString("en-US")} values (lists, dictionaries and scalars each count)`,
  );
}

function tooManyBytes(): ValueCheck {
  return refuse(
    "value_too_large",
    `the value is larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB as UTF-8 JSON; pass a file path instead of the content`,
  );
}

/** Bytes of the string as JSON.stringify writes it (quotes and escapes included), UTF-8 encoded. */
function stringBytes(text: string): number {
  let bytes = 2;
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    if (unit < 0x80) {
      if (unit === 0x22 || unit === 0x5c) bytes += 2;
      else if (unit >= 0x20) bytes += 1;
      else if (unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d) bytes += 2;
      else bytes += 6;
    } else if (unit < 0x800) {
      bytes += 2;
    } else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(at + 1))) {
      bytes += 4;
      at++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      bytes += 6; // a lone surrogate, which JSON.stringify escapes as \uXXXX
    } else {
      bytes += 3;
    }
  }
  return bytes;
}

function numberBytes(value: number): number {
  return String(value).length;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

function hasLoneSurrogate(text: string): boolean {
  for (let at = 0; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    if (unit > 0xdbff || !isLowSurrogate(text.charCodeAt(at + 1))) return true;
    at++;
  }
  return false;
}

function isPlainObject(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isNaN(value) ? "NaN" : String(value);
  if (typeof value === "bigint") return "a bigint";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value !== "object") return `a ${typeof value}`;
  if (Array.isArray(value))
    return Object.getPrototypeOf(value) === Array.prototype ? "a list" : "an Array subclass";
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "a non-plain object";
}

/** Where a value sits, such as `data["rows"][3]`; long paths keep their first and last steps. */
function pathOf(frame: Frame): string {
  const steps: string[] = [];
  for (let at: Frame | null = frame; at !== null; at = at.parent) {
    steps.push(
      at.parent === null
        ? String(at.key)
        : typeof at.key === "number"
          ? `[${at.key}]`
          : `[${JSON.stringify(at.key)}]`,
    );
  }
  steps.reverse();
  return (steps.length > 12 ? [...steps.slice(0, 6), "[…]", ...steps.slice(-5)] : steps).join("");
}

function refuse(code: ValueCode, message: string): ValueCheck {
  return { ok: false, code, message };
}
