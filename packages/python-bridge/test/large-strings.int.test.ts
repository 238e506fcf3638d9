import { describe, expect, test } from "vitest";
import type { InvokeOutcome, PythonWorker } from "../src/index";
import { LIMITS } from "../src/protocol";
import { loaded, node, workflowSource, workspace } from "./helpers";

/** Large strings by reference (protocol version 2) with the real worker: values come back equal. */

function value(outcome: InvokeOutcome) {
  if (!outcome.ok || !("value" in outcome))
    throw new Error(`expected a value, got ${JSON.stringify(outcome).slice(0, 500)}`);
  return outcome.value;
}

function failed(outcome: InvokeOutcome) {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome).slice(0, 500)}`);
  return outcome.error;
}

/** UTF-8 bytes of the large strings the engine and this worker hold in common. */
function keptBytes(worker: PythonWorker): number {
  return worker["strings"].keptBytes;
}

/** 100,000 characters each: ASCII, and characters of 2, 3 and 4 bytes of UTF-8. */
const A = "a".repeat(100_000);
const MIXED = `é€😀${"x".repeat(7)}`.repeat(10_000);
const PYTHON_A = '"a" * 100_000';
const PYTHON_MIXED = '("é€😀" + "x" * 7) * 10_000';

const NODES = workflowSource(
  `
A = ${PYTHON_A}
MIXED = ${PYTHON_MIXED}

def big(value):
    # Built on each call: new objects with the same content as the last call's.
    a = "".join(["a"] * 100_000)
    return WorkflowValue(MIXED, {"list": [a, MIXED, "small", a], "nested": {"deep": [[MIXED]]}, "b": "b" * 70_000})

def echo(value):
    return value

def rebuild(value):
    # The input's strings in new containers, and strings built from them.
    return WorkflowValue(value.text + "!", {"same": value.data, "text": value.text, "upper": value.text.upper()})

def check(value):
    # The input as the engine sent it, compared in Python.
    expected = WorkflowValue(MIXED, {"list": [A, MIXED, "small", A], "nested": {"deep": [[MIXED]]}, "b": "b" * 70_000})
    return "equal" if value == expected else "different: " + repr(value)[:200]

def mutate(value):
    items = value.data
    items.append(items[0])
    items[0] = "replaced"
    items.insert(1, items[-1] + "?")
    items.reverse()
    return WorkflowValue("mutated", items)

def over_limit(value):
    # 17 distinct 1 MiB strings: over 16 MiB with their full size, each far under the string limit.
    return WorkflowValue("t", [chr(65 + i) * (1024 * 1024) for i in range(17)])

def over_limit_by_ref(value):
    # One 1 MiB string named 17 times: one frame would do, but the limit counts it at each place.
    return WorkflowValue("t", ["r" * (1024 * 1024)] * 17)

def sleepy(value):
    time.sleep(float(value.text))
    return "slept"

def size(value):
    return str(sum(len(s) for s in value.data))

def combine(sources):
    return WorkflowValue("joined", [[s.node_id, s.value.text, s.value.data] for s in sources])

names = {}
for fn in [big, echo, rebuild, check, mutate, over_limit, over_limit_by_ref, size, sleepy]:
    names[fn.__name__] = wf.python(fn.__name__, fn, timeout=None)
wf.start(names["big"])
for name, handle in names.items():
    if name != "big":
        wf.edge(names["big"], handle)
wf.join([names["echo"], names["rebuild"]], wf.python("joined", echo, timeout=None), combine=combine)
wf.edge(names["echo"], names["check"], when=lambda v: v.text == MIXED and v.data[0] == A)
wf.edge(names["echo"], names["mutate"], when=lambda v: len(v.text) != 100_000)
body = lambda scope: (lambda n: (n, n))(scope.python("inner", echo))
wf.edge(names["big"], wf.loop("loop", body, until=lambda v: v.text == MIXED, max_iterations=3))
wf.output(names["big"])
`,
  "import time",
);

const BIG = {
  text: MIXED,
  data: { list: [A, MIXED, "small", A], nested: { deep: [[MIXED]] }, b: "b".repeat(70_000) },
};

describe("large strings with the real worker", () => {
  test("a value with several large strings comes back equal, call after call", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    for (let i = 0; i < 3; i++) expect(value(await worker.invoke(node("big")))).toEqual(BIG);
  });

  test("a result passed on as the next input arrives equal and comes back equal (a chain)", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    let current = value(await worker.invoke(node("big")));
    const kept = keptBytes(worker);
    expect(kept).toBeGreaterThan(0);
    for (let i = 0; i < 4; i++) {
      expect(value(await worker.invoke({ ...node("check"), input: current }))).toEqual({
        text: "equal",
        data: null,
      });
      current = value(await worker.invoke({ ...node("echo"), input: current }));
      expect(current).toEqual(BIG);
    }
    // Each string crossed the pipe once: the engine names the worker's strings by ref and the worker returns
    // the engine's by ref, so neither side kept anything new.
    expect(keptBytes(worker)).toBe(kept);
    const rebuilt = value(await worker.invoke({ ...node("rebuild"), input: current }));
    expect(rebuilt).toEqual({
      text: `${MIXED}!`,
      data: { same: BIG.data, text: MIXED, upper: MIXED.toUpperCase() },
    });
    // Strings the engine made itself (never seen by the worker) arrive equal as well.
    const fresh = { text: "t", data: { k: [`${A}${A}`, `${MIXED}é`], s: "small" } };
    expect(value(await worker.invoke({ ...node("echo"), input: fresh }))).toEqual(fresh);
    expect(value(await worker.invoke({ ...node("echo"), input: fresh }))).toEqual(fresh);
  });

  test("a large string under a __proto__ key goes both ways as an own property", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const data = JSON.parse(
      `{"__proto__": ${JSON.stringify(A)}, "k": [{"__proto__": ${JSON.stringify(MIXED)}}]}`,
    );
    for (let i = 0; i < 2; i++) {
      const out = value(await worker.invoke({ ...node("echo"), input: { text: "t", data } })).data as Record<
        string,
        unknown
      >;
      expect(Object.hasOwn(out, "__proto__")).toBe(true);
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      expect(JSON.stringify(out)).toBe(JSON.stringify(data));
    }
  });

  test("calls in flight together each get their own value", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const inputs = Array.from({ length: 8 }, (_, i) => ({
      text: `${i}`.repeat(70_000),
      data: [MIXED, `${A}${i}`, { i }],
    }));
    const outcomes = await Promise.all([
      ...inputs.map((input) => worker.invoke({ ...node("echo"), input })),
      ...inputs.map(() => worker.invoke(node("big"))),
    ]);
    expect(outcomes.slice(0, 8).map(value)).toEqual(inputs);
    for (const outcome of outcomes.slice(8)) expect(value(outcome)).toEqual(BIG);
  });

  test("a node that mutates a list holding large strings returns the mutated list", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const input = { text: "t", data: [A, MIXED, "small"] };
    // Twice: the second time the worker already holds the input's strings.
    for (let i = 0; i < 2; i++) {
      const out = value(await worker.invoke({ ...node("mutate"), input }));
      expect(out).toEqual({ text: "mutated", data: [A, "small", MIXED, `${A}?`, "replaced"] });
      expect(input).toEqual({ text: "t", data: [A, MIXED, "small"] });
    }
  });

  test("combine over sources with large strings", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const first = value(await worker.invoke(node("big")));
    const sources = [
      { node_id: "echo", activation_id: "echo#1", value: first },
      { node_id: "rebuild", activation_id: "rebuild#1", value: { text: A, data: [MIXED, A] } },
    ];
    const outcome = await worker.invoke({ kind: "combine", join: "join:joined", sources, timeout_ms: null });
    expect(value(outcome)).toEqual({
      text: "joined",
      data: [
        ["echo", MIXED, BIG.data],
        ["rebuild", A, [MIXED, A]],
      ],
    });
  });

  test("outgoing conditions and until conditions read large strings", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const conditions = { when: ["echo->check", "echo->mutate"], switch: null };
    const input = { text: MIXED, data: [A, "small"] };
    expect(await worker.invoke({ ...node("echo"), input, conditions })).toMatchObject({
      ok: true,
      value: input,
      passed: ["echo->check"],
    });
    for (const text of [MIXED, `${MIXED}!`]) {
      const batch = await worker.invoke({
        kind: "conditions",
        source: "echo",
        input: { text, data: [A] },
        conditions,
        timeout_ms: null,
      });
      expect(batch).toMatchObject({ ok: true, passed: text === MIXED ? ["echo->check"] : ["echo->mutate"] });
      const until = await worker.invoke({
        kind: "until",
        loop: "loop",
        input: { text, data: [A] },
        timeout_ms: null,
      });
      expect(until).toMatchObject({ ok: true, kind: "until", stop: text === MIXED });
    }
  });

  test("the engine refuses to send an input over 16 MiB with its strings, and the worker goes on", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const mib = (c: string) => c.repeat(1024 * 1024);
    // Distinct strings, and one string named in many places (sent once, counted at each place).
    for (const data of [
      Array.from({ length: 17 }, (_, i) => mib(String.fromCharCode(65 + i))),
      Array(17).fill(mib("r")),
    ]) {
      const error = failed(await worker.invoke({ ...node("size"), input: { text: "t", data } }));
      expect(error).toMatchObject({ code: "value_too_large", phase: "node" });
      expect(error.message).toContain("over the 16 MiB limit");
    }
    const fits = Array.from({ length: 15 }, (_, i) => mib(String.fromCharCode(65 + i)));
    expect(value(await worker.invoke({ ...node("size"), input: { text: "t", data: fits } }))).toEqual({
      text: String(15 * 1024 * 1024),
      data: null,
    });
    const sources = [16, 1].map((n, i) => ({
      node_id: `s${i}`,
      activation_id: `s${i}#1`,
      value: {
        text: "t",
        data: Array.from({ length: n }, (_, j) => mib(String.fromCharCode(97 + i * 16 + j))),
      },
    }));
    expect(
      failed(await worker.invoke({ kind: "combine", join: "join:joined", sources, timeout_ms: null })),
    ).toMatchObject({ code: "value_too_large", phase: "combine" });
    expect(value(await worker.invoke(node("big")))).toEqual(BIG);
  });

  test("a node returning an input string over 4,194,304 characters fails with value_too_large", async () => {
    // The engine may send such a string (a run's input, say); a node may not return it.
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const long = "l".repeat(4_194_305);
    for (const input of [
      { text: long, data: null },
      { text: "t", data: [long] },
    ]) {
      expect(failed(await worker.invoke({ ...node("echo"), input }))).toMatchObject({
        code: "value_too_large",
        phase: "node",
      });
    }
    const longest = { text: "m".repeat(4_194_304), data: null };
    expect(value(await worker.invoke({ ...node("echo"), input: longest }))).toEqual(longest);
  });

  test("a large string with a lone surrogate travels inline, and a node may not return it", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const lone = `${A}\ud800`;
    for (const input of [
      { text: lone, data: null },
      { text: "t", data: { k: [lone] } },
    ]) {
      expect(failed(await worker.invoke({ ...node("echo"), input }))).toMatchObject({
        code: "value_not_serializable",
        phase: "node",
      });
    }
    expect(keptBytes(worker)).toBe(0);
    expect(value(await worker.invoke({ ...node("size"), input: { text: "t", data: [lone, A] } }))).toEqual({
      text: String(2 * A.length + 1),
      data: null,
    });
  });

  test("the worker refuses to answer with a value over 16 MiB with its strings, and goes on", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    for (const name of ["over_limit", "over_limit_by_ref"]) {
      const error = failed(await worker.invoke(node(name)));
      expect(error).toMatchObject({ code: "value_too_large", phase: "node" });
      expect(error.message).toContain(
        `over the limit of ${LIMITS.messageBytes.toLocaleString("en-US")} bytes`,
      );
      // No string frame came before the refusal.
      expect(keptBytes(worker)).toBe(0);
    }
    expect(value(await worker.invoke(node("big")))).toEqual(BIG);
  });

  test("past 128 MiB kept, keep: false strings serve their own call, even when calls go back to back", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    // 33 distinct 4 MiB strings, three per call: past the kept limit of 128 MiB.
    for (let i = 0; i < 11; i++) {
      const data = [0, 1, 2].map((j) => String.fromCharCode(0x41 + i * 3 + j).repeat(4 * 1024 * 1024));
      expect(value(await worker.invoke({ ...node("size"), input: { text: "t", data } }))).toEqual({
        text: String(12 * 1024 * 1024),
        data: null,
      });
    }
    expect(keptBytes(worker)).toBeLessThanOrEqual(LIMITS.keptStringBytes);
    expect(keptBytes(worker)).toBeGreaterThan(LIMITS.keptStringBytes - 4 * 1024 * 1024);
    // New strings now travel with keep: false, each for its own message. Several calls are written at once
    // while the worker's reading thread runs a sync node, so that one read takes in several of them.
    const inputs = Array.from({ length: 8 }, (_, i) => ({
      text: "t",
      data: [String.fromCharCode(0x61 + i).repeat(LIMITS.largeStringChars)],
    }));
    const sleeping = worker.invoke({ ...node("sleepy"), input: { text: "0.3", data: null } });
    const outcomes = await Promise.all(inputs.map((input) => worker.invoke({ ...node("echo"), input })));
    expect(value(await sleeping)).toEqual({ text: "slept", data: null });
    expect(outcomes.map((outcome) => (outcome.ok ? outcome : JSON.stringify(outcome).slice(0, 300)))).toEqual(
      inputs.map((input) => expect.objectContaining({ ok: true, value: input })),
    );
    // One by one as well.
    for (const input of inputs.slice(0, 3))
      expect(value(await worker.invoke({ ...node("echo"), input }))).toEqual(input);
  });
});
