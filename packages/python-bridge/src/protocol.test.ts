import { describe, expect, test } from "vitest";
import { z } from "zod";
import { LineSplitter } from "./framing";
import {
  callIdOf,
  decodeFromWorker,
  decodeParsed,
  encodeToWorker,
  type FromWorkerMessage,
  FromWorkerMessageSchema,
  frameToWorker,
  LIMITS,
  PROTOCOL_VERSION,
  placeSites,
  StringFrameHeaderSchema,
  StringRefSchema,
  successOutcome,
  type ToWorkerMessage,
  ToWorkerMessageSchema,
} from "./protocol";

/**
 * Golden messages: one or more examples of every message in both directions. They are written to
 * `fixtures/protocol/messages.json` with the JSON Schema of both unions (`schema.json`), and
 * `python/tests/test_worker_protocol.py` checks the worker against them: it must accept every `to_worker`
 * message, and every message it produces must match `schema.json`.
 */
const TO_WORKER: ToWorkerMessage[] = [
  { type: "load", id: 1, entry: "/work/.chrys/workflows/echo.py", package_dir: null },
  {
    type: "load",
    id: 1,
    entry: "/work/.chrys/workflows/review/review.py",
    package_dir: "/work/.chrys/workflows/review",
  },
  {
    type: "invoke",
    id: 2,
    kind: "node",
    node: "echo",
    input: { text: "hello", data: null },
    timeout_ms: 300_000,
    conditions: null,
    conditions_timeout_ms: null,
  },
  {
    type: "invoke",
    id: 3,
    kind: "node",
    node: "route",
    input: { text: "é", data: { list: [1, 2.5, true, null], nested: { k: "v" } } },
    timeout_ms: null,
    conditions: {
      when: ["route->a", "route->b"],
      switch: { cases: ["route->c", "route->d"], default: "route->e" },
    },
    conditions_timeout_ms: 30_000,
  },
  {
    type: "invoke",
    id: 4,
    kind: "until",
    loop: "refine",
    input: { text: "draft", data: null },
    timeout_ms: 30_000,
  },
  {
    type: "invoke",
    id: 5,
    kind: "combine",
    join: "join:merge",
    sources: [
      { node_id: "a", activation_id: "a@iter#1", value: { text: "one", data: null } },
      { node_id: "b", activation_id: "b@iter#2", value: { text: "two", data: [1] } },
    ],
    timeout_ms: null,
  },
  { type: "cancel", id: 2 },
  {
    type: "answer",
    id: 6,
    ask_id: 1,
    ok: true,
    answers: [
      { selected: ["API"], text: "" },
      { selected: [], text: "own" },
    ],
  },
  {
    type: "answer",
    id: 6,
    ask_id: 2,
    ok: false,
    error: "ask_unavailable",
    message: "ctx.ask() is not available here",
  },
  { type: "shutdown" },
];

const OUTPUT = { text: "printed\n", truncated: false };

const FROM_WORKER: FromWorkerMessage[] = [
  {
    type: "hello",
    protocol: PROTOCOL_VERSION,
    sdk_version: "0.1.0",
    pid: 4242,
    python: {
      executable: "/usr/bin/python3.11",
      version: "3.11.7",
      version_info: [3, 11, 7],
      implementation: "cpython",
      platform: "linux",
      machine: "x86_64",
      libc: "glibc 2.36",
    },
    pycache_prefix: "/home/me/.chrys/cache/pycache",
  },
  { type: "load_output", id: 1, text: "loading\n" },
  {
    type: "load_result",
    id: 1,
    ok: true,
    definition: {
      format: 1,
      title: "Echo",
      nodes: [{ id: "echo", kind: "python", site: 0 }],
      edges: [],
      build_site: 1,
    },
    sites: [
      { file: "/work/.chrys/workflows/echo.py", line: 4, column: 8, end_line: 4, end_column: 31 },
      { file: "/work/.chrys/workflows/echo.py", line: 7, column: 12, end_line: 7, end_column: 22 },
    ],
    output: OUTPUT,
  },
  {
    type: "load_result",
    id: 1,
    ok: false,
    diagnostics: [
      {
        severity: "error",
        code: "load_error",
        stage: "load",
        message: "NameError: name 'summarise' is not defined",
        file: "/work/.chrys/workflows/code-review/steps.py",
        line: 2,
        column: 10,
        end_line: 2,
        end_column: 19,
        node: null,
        source_line: 'PROMPT = summarise("diff")',
        notes: [
          { message: "imported from", file: "/work/.chrys/workflows/code-review/code-review.py", line: 3 },
        ],
        hint: null,
        traceback: "Traceback (most recent call last):\n  ...\nNameError: name 'summarise' is not defined\n",
        pointer: null,
      },
    ],
    diagnostics_truncated: false,
    output: { text: "loading steps\n", truncated: false },
  },
  {
    type: "result",
    id: 3,
    ok: true,
    kind: "node",
    passed: ["route->a", "route->c"],
    value: { text: "é", data: { k: [1, null] } },
    output: OUTPUT,
    leaked_threads: 0,
  },
  { type: "result", id: 4, ok: true, kind: "until", stop: true, output: OUTPUT, leaked_threads: 0 },
  {
    type: "result",
    id: 5,
    ok: true,
    kind: "combine",
    value: { text: "one\ntwo", data: null },
    output: OUTPUT,
    leaked_threads: 1,
  },
  {
    type: "result",
    id: 2,
    ok: false,
    error: {
      code: "exception",
      message: "ValueError: bad input",
      phase: "node",
      edge: null,
      traceback:
        'Traceback (most recent call last):\n  File "/w/flow.py", line 3, in echo\nValueError: bad input\n',
      file: "/w/flow.py",
      line: 3,
    },
    output: { text: "", truncated: false },
    leaked_threads: 0,
  },
  {
    type: "result",
    id: 3,
    ok: false,
    error: {
      code: "invalid_result",
      message: "the condition of edge route->a returned int 1; it must return True or False",
      phase: "conditions",
      edge: "route->a",
      traceback: null,
      file: null,
      line: null,
    },
    output: OUTPUT,
    leaked_threads: 0,
  },
  { type: "emit", id: 6, text: "step 1 of 3" },
  {
    type: "ask",
    id: 6,
    ask_id: 1,
    questions: [
      {
        question: "Which areas?",
        header: "Areas",
        options: [{ label: "API", description: "" }],
        multi_select: true,
      },
      { question: "Anything else?", header: "", options: [], multi_select: false },
    ],
  },
  { type: "protocol_error", id: null, message: "unknown message type 'bogus'" },
];

const fixtures = new URL("../../../fixtures/protocol/", import.meta.url);

/**
 * JSON as the repository's formatter (biome, line width 110) prints it, so the generated fixtures pass
 * `biome check`: objects expanded, arrays on one line when they fit and hold no object.
 */
function formatJson(value: unknown, indent = "", prefix = 0): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const flat = value.every(
      (item) => typeof item !== "object" || item === null || (Array.isArray(item) && item.length === 0),
    );
    const inline = `[${value.map((item) => formatJson(item)).join(", ")}]`;
    if (flat && indent.length + prefix + inline.length + 1 <= 110) return inline;
    const inner = `${indent}  `;
    return `[\n${value.map((item) => inner + formatJson(item, inner)).join(",\n")}\n${indent}]`;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const inner = `${indent}  `;
    const lines = entries.map(([key, item]) => {
      const head = `${JSON.stringify(key)}: `;
      return inner + head + formatJson(item, inner, head.length);
    });
    return `{\n${lines.join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

describe("golden messages", () => {
  test("every golden message matches its schema, and every message type has one", () => {
    for (const message of TO_WORKER) expect(ToWorkerMessageSchema.parse(message)).toEqual(message);
    for (const message of FROM_WORKER) expect(FromWorkerMessageSchema.parse(message)).toEqual(message);
    expect(new Set(TO_WORKER.map((m) => m.type))).toEqual(
      new Set(["load", "invoke", "cancel", "answer", "shutdown"]),
    );
    expect(new Set(FROM_WORKER.map((m) => m.type))).toEqual(
      new Set(["hello", "load_output", "load_result", "result", "emit", "ask", "protocol_error"]),
    );
  });

  test("are pinned in fixtures/protocol/messages.json", async () => {
    const file = { protocol: PROTOCOL_VERSION, to_worker: TO_WORKER, from_worker: FROM_WORKER };
    await expect(`${formatJson(file)}\n`).toMatchFileSnapshot(new URL("messages.json", fixtures).pathname);
  });

  test("the JSON Schema of both directions and the limits are pinned in fixtures/protocol/schema.json", async () => {
    const schema = {
      $comment: "Generated from packages/python-bridge/src/protocol.ts by src/protocol.test.ts; do not edit.",
      protocol: PROTOCOL_VERSION,
      limits: LIMITS,
      to_worker: z.toJSONSchema(ToWorkerMessageSchema, { unrepresentable: "any" }),
      from_worker: z.toJSONSchema(FromWorkerMessageSchema, { unrepresentable: "any" }),
      string_frame_header: z.toJSONSchema(StringFrameHeaderSchema),
      string_ref: z.toJSONSchema(StringRefSchema),
    };
    await expect(`${formatJson(schema)}\n`).toMatchFileSnapshot(new URL("schema.json", fixtures).pathname);
  });
});

describe("decodeFromWorker", () => {
  test("accepts a well-formed message", () => {
    expect(decodeFromWorker('{"type":"emit","id":3,"text":"hi"}')).toEqual({
      ok: true,
      message: { type: "emit", id: 3, text: "hi" },
    });
  });

  test.each([
    ["not JSON", '{"type":"result","id":17,', 17, /^not JSON/],
    ["not JSON without an id", "garbage", null, /^not JSON/],
    ["an unknown type", '{"type":"bogus","id":5}', 5, /not a protocol message/],
    [
      "a result missing fields",
      '{"type":"result","id":9,"ok":true,"kind":"node"}',
      9,
      /not a protocol message/,
    ],
    ["an array", "[1,2]", null, /not a protocol message/],
    [
      "a hello of another protocol",
      `{"type":"hello","protocol":${PROTOCOL_VERSION + 1}}`,
      null,
      /not a protocol message at protocol/,
    ],
  ])("refuses %s without throwing, naming its call when it can", (_name, line, id, error) => {
    const decoded = decodeFromWorker(line);
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.id).toBe(id);
    expect(decoded.error).toMatch(error);
  });

  test("callIdOf reads the id from the first bytes only", () => {
    expect(callIdOf('{"type":"result","id":42,"ok":true')).toBe(42);
    expect(callIdOf('{"type":"protocol_error","id":null}')).toBeNull();
    expect(callIdOf('{"id":1,"type":"result"}')).toBeNull();
  });
});

describe("the hand-written checks of the hot path agree with the schemas", () => {
  const node = FROM_WORKER.find((m) => m.type === "result" && m.ok && m.kind === "node");
  if (node?.type !== "result" || !node.ok || node.kind !== "node") throw new Error("no golden node result");
  // No golden message of this kind: the node result without its value.
  const { value: _value, ...conditions } = { ...node, kind: "conditions" as const };
  const results = [...FROM_WORKER.filter((m) => m.type === "result" || m.type === "emit"), conditions];
  /** Each message broken (or changed) in one place. */
  const variants = (message: FromWorkerMessage): unknown[] => {
    const m = message as Record<string, unknown>;
    const out: unknown[] = [
      { ...m, extra: 1 },
      { ...m, id: -1 },
      { ...m, id: 1.5 },
      { ...m, id: 2 ** 60 },
      { ...m, id: "3" },
      { ...m, text: 5 },
      { ...m, ok: "true" },
      { ...m, kind: "bogus" },
      { ...m, leaked_threads: -1 },
      { ...m, leaked_threads: null },
      { ...m, output: { text: "", truncated: "no" } },
      { ...m, output: { text: "", truncated: false, extra: true } },
      { ...m, output: null },
      { ...m, passed: ["a", 1] },
      { ...m, passed: "a" },
      { ...m, stop: 1 },
      { ...m, value: { text: "t" } },
      { ...m, value: { text: 1, data: null } },
      { ...m, value: { text: "t", data: { deep: [1, { x: null }] }, extra: 1 } },
      { ...m, value: [] },
      [m],
    ];
    for (const key of Object.keys(m)) {
      const { [key]: _dropped, ...rest } = m;
      out.push(rest);
    }
    return out;
  };

  test("every successful result takes the hand-written path", () => {
    const successes = results.filter((m) => m.type === "result" && m.ok);
    expect(new Set(successes.map((m) => m.type === "result" && m.ok && m.kind))).toEqual(
      new Set(["node", "conditions", "until", "combine"]),
    );
    for (const { type: _type, id: _id, ...outcome } of successes) {
      expect(successOutcome(JSON.parse(JSON.stringify({ type: "result", id: 1, ...outcome })))).toStrictEqual(
        outcome,
      );
    }
  });

  test.each(
    results.flatMap((message) => [message, ...variants(message)]).map((raw) => [JSON.stringify(raw), raw]),
  )("%s", (_name, raw) => {
    const parsed = FromWorkerMessageSchema.safeParse(raw);
    const decoded = decodeParsed(raw);
    expect(decoded.ok).toBe(parsed.success);
    if (decoded.ok && parsed.success) expect(decoded.message).toStrictEqual(parsed.data);
  });
});

describe("encodeToWorker", () => {
  test("frames a message as one JSON line, type and id first", () => {
    const data = encodeToWorker({ type: "cancel", id: 7 });
    expect(data?.toString("utf8")).toBe('{"type":"cancel","id":7}\n');
  });

  test("frameToWorker counts UTF-8 bytes, not characters, against the limit", () => {
    const message = (text: string): ToWorkerMessage => ({
      type: "invoke",
      id: 1,
      kind: "until",
      loop: "l",
      input: { text, data: null },
      timeout_ms: null,
    });
    const room = LIMITS.messageBytes - Buffer.byteLength(frameToWorker(message(""))!, "utf8");
    const fits = "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2);
    expect(Buffer.byteLength(frameToWorker(message(fits))!, "utf8")).toBe(LIMITS.messageBytes);
    expect(frameToWorker(message(`${fits}x`))).toBeNull();
    expect(frameToWorker(message("x".repeat(room)))).not.toBeNull();
  });

  test("refuses a message over 16 MiB", () => {
    const text = "é".repeat(LIMITS.messageBytes / 2);
    expect(
      encodeToWorker({
        type: "invoke",
        id: 1,
        kind: "until",
        loop: "l",
        input: { text, data: null },
        timeout_ms: null,
      }),
    ).toBeNull();
  });
});

describe("string frame headers", () => {
  // The framing layer checks headers by hand; it must accept exactly what the schema accepts.
  test.each([
    { type: "string", ref: 1, bytes: 0, keep: true },
    { type: "string", ref: 2, bytes: 5, keep: false },
    { type: "string", ref: 3, bytes: LIMITS.messageBytes, keep: true },
    { type: "string", ref: 0, bytes: 1, keep: true },
    { type: "string", ref: -2, bytes: 1, keep: true },
    { type: "string", ref: 1.5, bytes: 1, keep: true },
    { type: "string", ref: "1", bytes: 1, keep: true },
    { type: "string", ref: 1, bytes: -1, keep: true },
    { type: "string", ref: 1, bytes: LIMITS.messageBytes + 1, keep: true },
    { type: "string", ref: 1, bytes: 1.5, keep: true },
    { type: "string", ref: 1, bytes: 1, keep: "yes" },
    { type: "string", ref: 1, bytes: 1 },
  ])("LineSplitter and StringFrameHeaderSchema agree on %j", (header) => {
    const splitter = new LineSplitter(LIMITS.messageBytes);
    const body = Buffer.alloc(
      typeof header.bytes === "number" && header.bytes > 0 && header.bytes < 64 ? header.bytes : 0,
      0x61,
    );
    const frames = splitter.push(
      Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body, Buffer.from("\n")]),
    );
    const accepted = StringFrameHeaderSchema.safeParse(header).success;
    if (header.bytes === LIMITS.messageBytes) {
      expect(accepted).toBe(true);
      expect(frames).toEqual([]); // waiting for its 16 MiB
    } else {
      expect(frames[0] !== undefined && "string" in frames[0]).toBe(accepted);
    }
  });

  test("StringRefSchema describes the entries SharedStrings writes", () => {
    expect(StringRefSchema.safeParse({ ref: 3, at: ["input", "data", 0] }).success).toBe(true);
    expect(StringRefSchema.safeParse({ ref: 3, at: [] }).success).toBe(false);
  });
});

describe("placeSites", () => {
  const A = { file: "/w/fan.py", line: 3, column: 1, end_line: 3, end_column: 20 };
  const B = { file: "/w/fan.py", line: 9, column: 5, end_line: 9, end_column: 15 };

  test("puts each site back where its index stood, shared by every node and edge that named it", () => {
    const definition = {
      nodes: [
        { id: "a", site: 0 },
        { id: "b", site: 0 },
        { id: "c", site: null },
      ],
      edges: [{ source: "a", target: "b", site: 1 }],
      build_site: 1,
    };
    expect(placeSites(definition, [A, B])).toBeNull();
    expect(definition).toEqual({
      nodes: [
        { id: "a", site: A },
        { id: "b", site: A },
        { id: "c", site: null },
      ],
      edges: [{ source: "a", target: "b", site: B }],
      build_site: B,
    });
  });

  test.each([
    [
      "past the end",
      { nodes: [{ site: 2 }] },
      /definition\.nodes\.0\.site is not an index into the 2 sites sent: 2/,
    ],
    ["negative", { edges: [{}, { site: -1 }] }, /definition\.edges\.1\.site .*: -1/],
    ["not an integer", { nodes: [], build_site: 0.5 }, /definition\.build_site .*: 0\.5/],
    ["a site object (protocol 2)", { nodes: [{ site: A }] }, /definition\.nodes\.0\.site .*\{"file"/],
  ])("refuses an index %s", (_, definition, problem) => {
    expect(placeSites(definition, [A, B])).toMatch(problem);
  });

  test("leaves a Definition of the wrong shape to the graph stage", () => {
    for (const definition of [null, [], "x", { nodes: "x", edges: [1, null] }]) {
      expect(placeSites(definition, [A])).toBeNull();
    }
  });
});
