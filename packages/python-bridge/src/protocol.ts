import { DiagnosticSchema } from "@icode/workflow-errors";
import { type CapturedText, CapturedTextSchema, LARGE_STRING_CHARS } from "@icode/workflow-graph";
import { z } from "zod";

/**
 * The wire protocol between the engine and the Python worker, defined once: every message in both
 * directions is a member of one of the two discriminated unions below, and every TypeScript type is
 * inferred from them. The Python side (`python/chrys/workflows/_protocol.py`) is tested against the JSON
 * Schema and golden messages generated from these schemas into `fixtures/protocol/`. See `docs/protocol.md`.
 *
 * Framing: one JSON object per line, UTF-8, at most `LIMITS.messageBytes` bytes including the newline. Every
 * message starts with `type`, then `id` when it has one, so a receiver can name the call of a message it
 * must refuse after reading its first bytes.
 */

export const PROTOCOL_VERSION = 3 as const;

export const LIMITS = {
  /**
   * One message between the processes, UTF-8, newline included, counting every large string it carries
   * or names by reference at its full UTF-8 size.
   */
  messageBytes: 16 * 1024 * 1024,
  /** Strings at least this long in a value travel as string frames, by reference (`SharedStrings`). */
  largeStringChars: LARGE_STRING_CHARS,
  /** Large strings the two sides keep in common for later messages, in UTF-8 bytes. */
  keptStringBytes: 128 * 1024 * 1024,
  /** Captured `sys.stdout`/`sys.stderr` text kept per load and per call (the first 64 KiB of UTF-8). */
  captureBytes: 64 * 1024,
  /** Output on file descriptors 1 and 2 kept per worker (the last 64 KiB). */
  nativeBytes: 64 * 1024,
  /** `ctx.emit()` per attempt: at most 200 messages in any rolling second, 10,000 in all, 8 MiB of text. */
  emitPerSecond: 200,
  emitCount: 10_000,
  emitBytes: 8 * 1024 * 1024,
  /** All sources passed to one custom `combine`, as UTF-8 JSON. */
  combineInputBytes: 12 * 1024 * 1024,
  /** The shared limit of one outgoing-condition batch, and of each `until` and `combine` call. */
  callableTimeoutMs: 30_000,
  /** Loading and building the workflow. */
  loadTimeoutMs: 60_000,
} as const;

/** Any JSON value. Not re-validated value by value: it comes out of `JSON.parse`, so it is JSON. */
const JsonSchema = z.custom<JsonValue>(() => true);
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A `WorkflowValue` on the wire. */
export const WireValueSchema = z.object({ text: z.string(), data: JsonSchema });
export type WireValue = z.infer<typeof WireValueSchema>;

export const WireSourceSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  value: WireValueSchema,
});
export type WireSource = z.infer<typeof WireSourceSchema>;

/**
 * The conditional outgoing edges of a node, as edge keys `source->target`, evaluated on its returned
 * value in the same round trip: `when` edges in order and independently, then the `switch` cases in
 * order (the first true one is taken, else `default`). Unconditional edges are not listed.
 */
export const ConditionsSchema = z.object({
  when: z.array(z.string()),
  switch: z.object({ cases: z.array(z.string()), default: z.string() }).nullable(),
});
export type Conditions = z.infer<typeof ConditionsSchema>;

const positiveMs = z.number().positive().finite();

// --- engine → worker ----------------------------------------------------------------------------------

const LoadMessageSchema = z.object({
  type: z.literal("load"),
  id: z.number().int().nonnegative(),
  /** Absolute path of the entry file. */
  entry: z.string(),
  /** Absolute path of the workflow folder, or `null` for a single file. */
  package_dir: z.string().nullable(),
});

const InvokeNodeMessageSchema = z.object({
  type: z.literal("invoke"),
  id: z.number().int().nonnegative(),
  kind: z.literal("node"),
  /** The python node's ID; the worker calls `workflow._callables["node:<id>"]`. */
  node: z.string(),
  input: WireValueSchema,
  /** The node's per-attempt limit, or `null` for none. */
  timeout_ms: positiveMs.nullable(),
  conditions: ConditionsSchema.nullable(),
  /** The shared limit of the condition batch (default 30 s). */
  conditions_timeout_ms: positiveMs.nullable(),
});

/** The outgoing conditions of a node whose value is already known: a loop or join node, or a manual retry
 * of a failed condition batch. Same rules and one shared limit, as after a node function. */
const InvokeConditionsMessageSchema = z.object({
  type: z.literal("invoke"),
  id: z.number().int().nonnegative(),
  kind: z.literal("conditions"),
  /** The node whose outgoing edges these are. */
  source: z.string(),
  /** The value the conditions receive. */
  input: WireValueSchema,
  conditions: ConditionsSchema,
  timeout_ms: positiveMs.nullable(),
});

const InvokeUntilMessageSchema = z.object({
  type: z.literal("invoke"),
  id: z.number().int().nonnegative(),
  kind: z.literal("until"),
  /** The loop node's ID; the worker calls `until:<id>`. */
  loop: z.string(),
  /** The iteration's exit output. */
  input: WireValueSchema,
  timeout_ms: positiveMs.nullable(),
});

const InvokeCombineMessageSchema = z.object({
  type: z.literal("invoke"),
  id: z.number().int().nonnegative(),
  kind: z.literal("combine"),
  /** The join node's ID (`join:<target>`); the worker calls `combine:<id>`. */
  join: z.string(),
  sources: z.array(WireSourceSchema),
  timeout_ms: positiveMs.nullable(),
});

export const InvokeMessageSchema = z.discriminatedUnion("kind", [
  InvokeNodeMessageSchema,
  InvokeConditionsMessageSchema,
  InvokeUntilMessageSchema,
  InvokeCombineMessageSchema,
]);

const CancelMessageSchema = z.object({
  type: z.literal("cancel"),
  id: z.number().int().nonnegative(),
});

/** One answer to one question (`chrys.workflows.Answer`). */
export const AnswerSchema = z.object({ selected: z.array(z.string()), text: z.string() });
export type Answer = z.infer<typeof AnswerSchema>;

const AnswerMessageSchema = z.discriminatedUnion("ok", [
  z.object({
    type: z.literal("answer"),
    id: z.number().int().nonnegative(),
    ask_id: z.number().int().nonnegative(),
    ok: z.literal(true),
    answers: z.array(AnswerSchema),
  }),
  z.object({
    type: z.literal("answer"),
    id: z.number().int().nonnegative(),
    ask_id: z.number().int().nonnegative(),
    ok: z.literal(false),
    error: z.literal("ask_unavailable"),
    message: z.string(),
  }),
]);

const ShutdownMessageSchema = z.object({ type: z.literal("shutdown") });

export const ToWorkerMessageSchema = z.discriminatedUnion("type", [
  LoadMessageSchema,
  InvokeMessageSchema,
  CancelMessageSchema,
  AnswerMessageSchema,
  ShutdownMessageSchema,
]);
export type ToWorkerMessage = z.infer<typeof ToWorkerMessageSchema>;

// --- worker → engine ----------------------------------------------------------------------------------

export const PythonInfoSchema = z.object({
  /** `os.path.realpath(sys.executable)`: the real binary, to spawn directly next time. */
  executable: z.string(),
  /** `"3.11.7"` */
  version: z.string(),
  version_info: z.tuple([z.number().int(), z.number().int(), z.number().int()]),
  /** `sys.implementation.name`, e.g. `cpython`. */
  implementation: z.string(),
  /** `sys.platform`, e.g. `linux`. */
  platform: z.string(),
  /** `platform.machine()`, e.g. `x86_64`. */
  machine: z.string(),
  /** `platform.libc_ver()` joined with a space (`glibc 2.36`), `""` when unknown. */
  libc: z.string(),
});
export type PythonInfo = z.infer<typeof PythonInfoSchema>;

export const HelloMessageSchema = z.object({
  type: z.literal("hello"),
  protocol: z.literal(PROTOCOL_VERSION),
  sdk_version: z.string(),
  pid: z.number().int(),
  python: PythonInfoSchema,
  /** `sys.pycache_prefix`: `null` when the interpreter ignores `PYTHONPYCACHEPREFIX` (`-E`, `-I`). */
  pycache_prefix: z.string().nullable(),
});
export type Hello = z.infer<typeof HelloMessageSchema>;

/** Load output as it is printed, so a load that times out still shows what it printed. */
const LoadOutputMessageSchema = z.object({
  type: z.literal("load_output"),
  id: z.number().int().nonnegative(),
  text: z.string(),
});

export const LoadResultMessageSchema = z.discriminatedUnion("ok", [
  z.object({
    type: z.literal("load_result"),
    id: z.number().int().nonnegative(),
    ok: z.literal(true),
    /**
     * The built workflow's Definition, each `site` of a node or edge and `build_site` written as an index into
     * `sites` (or `null`); `placeSites` puts them back, and the graph stage checks the result against
     * `DefinitionSchema`.
     */
    definition: z.unknown(),
    /** Each distinct site once: nodes and edges declared in a loop share one. */
    sites: z.array(z.unknown()),
    output: CapturedTextSchema,
  }),
  z.object({
    type: z.literal("load_result"),
    id: z.number().int().nonnegative(),
    ok: z.literal(false),
    diagnostics: z.array(DiagnosticSchema),
    diagnostics_truncated: z.boolean(),
    output: CapturedTextSchema,
  }),
]);

/** Why a call failed. `exception` and `timeout` may be retried; every other code never is. */
export const CALL_ERROR_CODES = [
  "exception",
  "invalid_result",
  "value_not_serializable",
  "value_too_large",
  "protocol_limit",
  "ask_unavailable",
  "timeout",
  "cancelled",
  "protocol_error",
] as const;
export const CallErrorCodeSchema = z.enum(CALL_ERROR_CODES);
export type CallErrorCode = z.infer<typeof CallErrorCodeSchema>;

/** The error codes the spec lets a node retry (a raised exception, including `SystemExit`, and a timeout). */
export const RETRYABLE_CALL_ERRORS: readonly CallErrorCode[] = ["exception", "timeout"];

/** Which part of the call failed: the node function, its outgoing conditions, `until` or `combine`. */
export const CallPhaseSchema = z.enum(["node", "conditions", "until", "combine"]);
export type CallPhase = z.infer<typeof CallPhaseSchema>;

export const CallErrorSchema = z.object({
  code: CallErrorCodeSchema,
  message: z.string(),
  phase: CallPhaseSchema,
  /** The edge (`source->target`) whose condition failed, else `null`. */
  edge: z.string().nullable(),
  /** The Python traceback with only the author's own frames, or `null`. */
  traceback: z.string().nullable(),
  /** The innermost frame of the author's code in that traceback. */
  file: z.string().nullable(),
  line: z.number().int().nullable(),
});
export type CallError = z.infer<typeof CallErrorSchema>;

const resultBase = {
  type: z.literal("result"),
  id: z.number().int().nonnegative(),
  /** What the call printed: the first 64 KiB (UTF-8); writes after a timeout or cancel are dropped. */
  output: CapturedTextSchema,
  /** Threads of timed-out or cancelled calls still running in the worker (they cannot be stopped). */
  leaked_threads: z.number().int().nonnegative(),
};

const ResultMessageSchema = z.discriminatedUnion("ok", [
  z.discriminatedUnion("kind", [
    z.object({
      ...resultBase,
      ok: z.literal(true),
      kind: z.literal("node"),
      /** The conditional edges that pass the value on (true `when` edges, the selected switch edge). */
      passed: z.array(z.string()),
      value: WireValueSchema,
    }),
    z.object({
      ...resultBase,
      ok: z.literal(true),
      kind: z.literal("conditions"),
      passed: z.array(z.string()),
    }),
    z.object({ ...resultBase, ok: z.literal(true), kind: z.literal("until"), stop: z.boolean() }),
    z.object({ ...resultBase, ok: z.literal(true), kind: z.literal("combine"), value: WireValueSchema }),
  ]),
  z.object({ ...resultBase, ok: z.literal(false), error: CallErrorSchema }),
]);
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

const EmitMessageSchema = z.object({
  type: z.literal("emit"),
  id: z.number().int().nonnegative(),
  text: z.string(),
});

export const QuestionSchema = z.object({
  question: z.string(),
  header: z.string(),
  options: z.array(z.object({ label: z.string(), description: z.string() })),
  multi_select: z.boolean(),
});
export type Question = z.infer<typeof QuestionSchema>;

const AskMessageSchema = z.object({
  type: z.literal("ask"),
  id: z.number().int().nonnegative(),
  ask_id: z.number().int().nonnegative(),
  questions: z.array(QuestionSchema).min(1).max(5),
});

/** The worker refused a message (bad JSON, unknown type, over the size limit). */
const ProtocolErrorMessageSchema = z.object({
  type: z.literal("protocol_error"),
  id: z.number().int().nonnegative().nullable(),
  message: z.string(),
});

export const FromWorkerMessageSchema = z.discriminatedUnion("type", [
  HelloMessageSchema,
  LoadOutputMessageSchema,
  LoadResultMessageSchema,
  ResultMessageSchema,
  EmitMessageSchema,
  AskMessageSchema,
  ProtocolErrorMessageSchema,
]);
export type FromWorkerMessage = z.infer<typeof FromWorkerMessageSchema>;

// --- large strings (both directions; docs/protocol.md, "Large strings") ----------------------------------

/**
 * The header line of a string frame; exactly `bytes` bytes of the string's UTF-8 and a newline follow it.
 * Not a message of the unions above: the framing layer takes it (framing.ts and `_protocol.LineReader` check
 * it by hand, against this schema in the tests).
 */
export const StringFrameHeaderSchema = z.object({
  type: z.literal("string"),
  /** Odd for strings the engine sends, even for the worker's. */
  ref: z.number().int().positive(),
  bytes: z.number().int().nonnegative().max(LIMITS.messageBytes),
  /** Kept by both sides for later messages (`true`), or for the message that names it only. */
  keep: z.boolean(),
});
export type StringFrameHeader = z.infer<typeof StringFrameHeaderSchema>;

/** An entry of the `strings` field of an `invoke` or `result`: the string `ref` goes at `at` (keys and indices from the message). */
export const StringRefSchema = z.object({
  ref: z.number().int().positive(),
  at: z.array(z.union([z.string(), z.number().int().nonnegative()])).min(1),
});
export type StringRef = z.infer<typeof StringRefSchema>;

// --- encoding and decoding ----------------------------------------------------------------------------

/** A message as the worker sent it, or why it could not be read; `id` names its call when known. */
export type Decoded =
  | { ok: true; message: FromWorkerMessage }
  | { ok: false; id: number | null; error: string };

const ID_PREFIX = /^\{\s*"type"\s*:\s*"[a-z_]+"\s*,\s*"id"\s*:\s*(\d{1,15})\s*[,}]/;

/** The `id` of a message from its first bytes, for messages that cannot be parsed whole. */
export function callIdOf(prefix: string): number | null {
  const match = ID_PREFIX.exec(prefix.slice(0, 120));
  return match ? Number(match[1]) : null;
}

/** Parses and schema-checks one line from the worker. Never throws. */
export function decodeFromWorker(line: string): Decoded {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (error) {
    return { ok: false, id: callIdOf(line), error: `not JSON: ${(error as Error).message}` };
  }
  return decodeParsed(raw);
}

/** `decodeFromWorker` after `JSON.parse`. */
export function decodeParsed(raw: unknown): Decoded {
  if (isRecord(raw) && isCallId(raw.id)) {
    if (raw.type === "result") {
      const outcome = successOutcome(raw);
      if (outcome !== null) return { ok: true, message: { type: "result", id: raw.id, ...outcome } };
    } else if (raw.type === "emit" && typeof raw.text === "string") {
      return { ok: true, message: { type: "emit", id: raw.id, text: raw.text } };
    }
  }
  const parsed = FromWorkerMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const id =
    typeof raw === "object" && raw !== null && Number.isInteger((raw as { id?: unknown }).id)
      ? ((raw as { id: number }).id as number)
      : null;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  return { ok: false, id, error: `not a protocol message${where}: ${issue?.message ?? "invalid"}` };
}

/**
 * Puts a `load_result`'s sites back into its Definition, in place: each `site` of `nodes[i]` and `edges[i]`,
 * and `build_site`, is an index into `sites` or `null` on the wire. Returns a problem when one is neither;
 * any other mistake in the Definition is left to the graph stage, which names it.
 */
export function placeSites(definition: unknown, sites: readonly unknown[]): string | null {
  if (!isRecord(definition)) return null;
  const place = (holder: Record<string, unknown>, key: string, where: string): string | null => {
    const index = holder[key];
    if (index === null || index === undefined) return null;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= sites.length) {
      return `${where} is not an index into the ${sites.length} sites sent: ${JSON.stringify(index)?.slice(0, 40)}`;
    }
    holder[key] = sites[index];
    return null;
  };
  for (const list of ["nodes", "edges"] as const) {
    const items = definition[list];
    if (!Array.isArray(items)) continue;
    for (let i = 0; i < items.length; i++) {
      const item: unknown = items[i];
      const problem = isRecord(item) ? place(item, "site", `definition.${list}.${i}.site`) : null;
      if (problem !== null) return problem;
    }
  }
  return place(definition, "build_site", "definition.build_site");
}

/** The framed bytes of one message (`JSON + "\n"`), or `null` when it is over the size limit. */
export function encodeToWorker(message: ToWorkerMessage): Buffer | null {
  const line = frameToWorker(message);
  return line === null ? null : Buffer.from(line, "utf8");
}

/** The framed text of one message (`JSON + "\n"`), or `null` when its UTF-8 is over the size limit. */
export function frameToWorker(message: ToWorkerMessage): string | null {
  return frameJson(message);
}

/** `JSON + "\n"` of any message, or `null` when its UTF-8 is over the size limit. */
export function frameJson(message: unknown): string | null {
  const line = `${JSON.stringify(message)}\n`;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most messages need no byte count.
  if (line.length * 3 > LIMITS.messageBytes && Buffer.byteLength(line, "utf8") > LIMITS.messageBytes)
    return null;
  return line;
}

// --- the hot path ----------------------------------------------------------------------------------------

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** How a call ended: a `result` message without `type` and `id`. */
export type ResultOutcome = DistributiveOmit<ResultMessage, "type" | "id">;

/**
 * The outcome of a successful `result` message (any kind), checked by hand, or `null`: a failed result, or
 * anything these checks do not accept, is left to `FromWorkerMessageSchema`. Every result of a run passes
 * here, and a zod parse costs more than the rest of reading it. The checks are those of
 * `ResultMessageSchema`, and like zod they build new objects with the schema's keys only; the schema stays
 * the reference (the tests hold the two against each other). `raw.id` must be checked by the caller.
 */
export function successOutcome(raw: Record<string, unknown>): ResultOutcome | null {
  if (raw.ok !== true) return null;
  const output = capturedText(raw.output);
  const leaked = raw.leaked_threads;
  if (output === null || !isCallId(leaked)) return null;
  switch (raw.kind) {
    case "node": {
      const value = wireValue(raw.value);
      if (value === null || !isStrings(raw.passed)) return null;
      return { output, leaked_threads: leaked, ok: true, kind: "node", passed: raw.passed, value };
    }
    case "conditions":
      if (!isStrings(raw.passed)) return null;
      return { output, leaked_threads: leaked, ok: true, kind: "conditions", passed: raw.passed };
    case "until":
      if (typeof raw.stop !== "boolean") return null;
      return { output, leaked_threads: leaked, ok: true, kind: "until", stop: raw.stop };
    case "combine": {
      const value = wireValue(raw.value);
      if (value === null) return null;
      return { output, leaked_threads: leaked, ok: true, kind: "combine", value };
    }
    default:
      return null;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A non-negative integer, as `z.number().int().nonnegative()` (safe integers only: others go to zod). */
export function isCallId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isStrings(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== "string") return false;
  return true;
}

function capturedText(value: unknown): CapturedText | null {
  if (!isRecord(value) || typeof value.text !== "string" || typeof value.truncated !== "boolean") return null;
  return { text: value.text, truncated: value.truncated };
}

function wireValue(value: unknown): WireValue | null {
  if (!isRecord(value) || typeof value.text !== "string" || !("data" in value)) return null;
  // Keys in code point order: the records write events holding this value as canonical JSON, which hands
  // objects already in order to the native JSON.stringify (~3 µs per node of a chain).
  return { data: value.data as JsonValue, text: value.text };
}
