import { getEventListeners } from "node:events";
import { existsSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { InvokeOutcome } from "../src/index";
import { loaded, node, workflowSource, workspace } from "./helpers";

function failed(outcome: InvokeOutcome) {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

const NODES = workflowSource(
  `
def plain(value):
    return value.text.upper()

def structured(value):
    return WorkflowValue(value.text, {"n": [1, 2.5, True, None, "s"], "nested": {"k": value.data}})

async def awaiting(value, ctx):
    await asyncio.sleep(0.01)
    ctx.emit("one")
    ctx.emit("two")
    return WorkflowValue(value.text, value.data)

def reporter(value, ctx):
    for i in range(3):
        ctx.emit(f"step {i}")
    return "reported"

def raiser(value):
    helper(value.text)

def helper(text):
    raise ValueError("bad input: " + text)

def exits(value):
    import sys
    sys.exit(4)

def not_serializable(value):
    return WorkflowValue("t", {"s": {1, 2}})

def too_deep(value):
    data = None
    for _ in range(66):
        data = [data]
    return WorkflowValue("t", data)

def returns_int(value):
    return 42

def sleeper(value):
    print("before sleep")
    time.sleep(float(value.text))
    print("after sleep")
    open(os.path.join(os.getcwd(), "sleeper-done"), "w").close()
    return "slept"

async def async_sleeper(value):
    await asyncio.sleep(float(value.text))
    open(os.path.join(os.getcwd(), "async-done"), "w").close()
    return "slept"

def burst(value, ctx):
    for i in range(int(value.text)):
        try:
            ctx.emit(f"m{i}")
        except Exception as error:
            print("caught", type(error).__name__)
    return "survived"

def heavy(value, ctx):
    chunk = "x" * (1024 * 1024)
    for _ in range(9):
        ctx.emit(chunk)
    return "survived"

async def asker(value, ctx):
    answer = await ctx.ask(Question("Which?", options=["A", "B"]))
    text = await ctx.ask("Name?")
    return WorkflowValue(answer.choice + "/" + text, {"selected": list(answer.selected)})

async def polite_asker(value, ctx):
    try:
        return await ctx.ask("Name?")
    except Exception as error:
        return "fallback: " + type(error).__name__

async def blocking_async(value):
    time.sleep(float(value.text))
    return "blocked"

def stamp(value):
    return repr(time.time())

names = {}
for fn in [plain, structured, awaiting, reporter, raiser, exits, not_serializable, too_deep, returns_int, sleeper,
           async_sleeper, burst, heavy, asker, polite_asker, blocking_async, stamp]:
    names[fn.__name__] = wf.python(fn.__name__, fn, timeout=None)
wf.start(names["plain"])
for name, handle in names.items():
    if name != "plain":
        wf.edge(names["plain"], handle)
wf.output(names["plain"])
`,
  "import asyncio, os, time\nfrom chrys.workflows import Question",
);

describe("node functions", () => {
  test("a sync function returning str gives a WorkflowValue; data round-trips", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    expect(await worker.invoke(node("plain", "hi"))).toEqual({
      ok: true,
      kind: "node",
      value: { text: "HI", data: null },
      passed: [],
      output: { text: "", truncated: false },
      leaked_threads: 0,
    });
    const outcome = await worker.invoke({
      ...node("structured", "t"),
      input: { text: "t", data: { deep: ["é", 1] } },
    });
    expect(outcome).toMatchObject({
      ok: true,
      value: { text: "t", data: { n: [1, 2.5, true, null, "s"], nested: { k: { deep: ["é", 1] } } } },
    });
  });

  test("an async function with a context emits messages in order before its result", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const emitted: string[] = [];
    const outcome = await worker.invoke(
      { ...node("awaiting", "t"), input: { text: "t", data: [1] } },
      { onEmit: (text) => emitted.push(text) },
    );
    expect(outcome).toMatchObject({ ok: true, value: { text: "t", data: [1] } });
    expect(emitted).toEqual(["one", "two"]);
    const sync: string[] = [];
    await worker.invoke(node("reporter"), { onEmit: (text) => sync.push(text) });
    expect(sync).toEqual(["step 0", "step 1", "step 2"]);
  });

  test("an exception fails the call with the user's frames only", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const error = failed(await worker.invoke(node("raiser", "zz")));
    expect(error).toMatchObject({
      code: "exception",
      phase: "node",
      message: "ValueError: bad input: zz",
      edge: null,
    });
    expect(error.file).toMatch(/n\.py$/);
    expect(error.line).toBe(NODES.split("\n").indexOf('    raise ValueError("bad input: " + text)') + 1);
    expect(error.traceback).toContain("in raiser");
    expect(error.traceback).toContain("in helper");
    expect(error.traceback).not.toMatch(/chrys[/\\]workflows|concurrent|threading/);
  });

  test("SystemExit in a node fails only that attempt", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    expect(failed(await worker.invoke(node("exits")))).toMatchObject({
      code: "exception",
      message: "SystemExit: 4",
    });
    expect(await worker.invoke(node("plain", "ok"))).toMatchObject({ ok: true });
  });

  test.each([
    ["not_serializable", "value_not_serializable", /data\['s'\] is a set/],
    ["too_deep", "value_too_large", /nested 65 levels deep/],
    ["returns_int", "value_not_serializable", /returned an int;/],
  ])("%s fails with %s", async (name, code, message) => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const error = failed(await worker.invoke(node(name)));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  test("an unknown node is a protocol_error", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    expect(failed(await worker.invoke(node("nope")))).toMatchObject({
      code: "protocol_error",
      message: "the workflow has no python node 'nope'",
    });
  });
});

describe("timeouts, cancellation and leaked threads", () => {
  test("a sync function over its timeout: the call fails at once, its thread leaks until it returns", async () => {
    const ws = workspace({ "n.py": NODES });
    const worker = await loaded(ws, "n.py");
    const started = Date.now();
    const outcome = await worker.invoke(node("sleeper", "1.0", { timeout_ms: 200 }));
    expect(Date.now() - started).toBeLessThan(900);
    expect(failed(outcome)).toMatchObject({ code: "timeout", phase: "node" });
    expect(outcome.output).toEqual({ text: "before sleep\n", truncated: false });
    expect(outcome.leaked_threads).toBe(1);
    // Once the thread returns it is no longer counted; what it printed after the timeout was dropped.
    await new Promise((done) => setTimeout(done, 1_000));
    expect(existsSync(ws.path("sleeper-done"))).toBe(true);
    const later = await worker.invoke(node("plain", "x"));
    expect(later.leaked_threads).toBe(0);
    expect(later.output.text).toBe("");
    expect(worker.native().text).not.toContain("after sleep");
  });

  test("an async function over its timeout is cancelled", async () => {
    const ws = workspace({ "n.py": NODES });
    const worker = await loaded(ws, "n.py");
    expect(failed(await worker.invoke(node("async_sleeper", "0.5", { timeout_ms: 100 })))).toMatchObject({
      code: "timeout",
    });
    await new Promise((done) => setTimeout(done, 700));
    expect(existsSync(ws.path("async-done"))).toBe(false);
  });

  test("aborting a call sends cancel and settles it at once", async () => {
    const ws = workspace({ "n.py": NODES });
    const worker = await loaded(ws, "n.py");
    const controller = new AbortController();
    const pending = worker.invoke(node("async_sleeper", "0.5"), { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(failed(await pending)).toMatchObject({ code: "cancelled" });
    await new Promise((done) => setTimeout(done, 700));
    expect(existsSync(ws.path("async-done"))).toBe(false);
    const sync = new AbortController();
    const syncPending = worker.invoke(node("sleeper", "0.3"), { signal: sync.signal });
    // Once it runs (a call cancelled before a thread took it never starts), its thread cannot be stopped.
    await new Promise((done) => setTimeout(done, 100));
    sync.abort();
    expect(failed(await syncPending)).toMatchObject({ code: "cancelled" });
    expect((await worker.invoke(node("plain"))).leaked_threads).toBe(1);
  });

  test("calls sharing a signal are cancelled together; a signal reused for many calls has one listener", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const shared = new AbortController();
    const pending = [5, 6].map((s) =>
      worker.invoke(node("async_sleeper", String(s)), { signal: shared.signal }),
    );
    for (let i = 0; i < 50; i++) {
      expect(await worker.invoke(node("plain", `x${i}`), { signal: shared.signal })).toMatchObject({
        ok: true,
      });
    }
    await new Promise((done) => setTimeout(done, 100)); // the long calls' signal is listened to by now
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(1);
    shared.abort();
    const outcomes = await Promise.all(pending);
    expect(outcomes.map((outcome) => failed(outcome).code)).toEqual(["cancelled", "cancelled"]);
    const early = new AbortController();
    const aborted = worker.invoke(node("async_sleeper", "5"), { signal: early.signal });
    early.abort(); // while its signal is polled
    expect(failed(await aborted).code).toBe("cancelled");
    const later = new AbortController();
    const done = await worker.invoke(node("plain", "after"), { signal: later.signal });
    later.abort(); // after the call settled: nothing to cancel
    expect(done).toMatchObject({ ok: true, value: { text: "AFTER" } });
    expect(getEventListeners(later.signal, "abort")).toHaveLength(0); // a short call never listened
  });

  test("registerCancel: cancelling at once sends nothing; later it cancels the call; after it settled, nothing", async () => {
    const ws = workspace({ "n.py": NODES });
    const worker = await loaded(ws, "n.py");
    const registered: Array<() => void> = [];
    // Cancelled as it is registered (the caller knew it was aborted): the worker never hears of the call.
    const first = await worker.invoke(node("sleeper", "0.01"), {
      registerCancel: (cancel) => {
        registered.push(cancel);
        cancel();
      },
    });
    expect(failed(first)).toMatchObject({
      code: "cancelled",
      message: "the call was cancelled before it started",
    });
    // Cancelled while it runs: settled at once, and the async function stops.
    const pending = worker.invoke(node("async_sleeper", "0.5"), {
      registerCancel: (c) => registered.push(c),
    });
    await new Promise((done) => setTimeout(done, 50));
    registered[1]!();
    expect(failed(await pending)).toMatchObject({ code: "cancelled", message: "the call was cancelled" });
    // After the call settled: nothing happens, and the worker goes on.
    const done = await worker.invoke(node("plain", "after"), { registerCancel: (c) => registered.push(c) });
    registered[2]!();
    registered[2]!();
    expect(done).toMatchObject({ ok: true, value: { text: "AFTER" } });
    expect(await worker.invoke(node("plain", "again"))).toMatchObject({ ok: true, leaked_threads: 0 });
    await new Promise((done) => setTimeout(done, 600));
    expect(existsSync(ws.path("sleeper-done"))).toBe(false);
    expect(existsSync(ws.path("async-done"))).toBe(false);
  });

  test("an async function that blocks the event loop is settled by the engine's backstop", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const started = Date.now();
    const error = failed(await worker.invoke(node("blocking_async", "3.5", { timeout_ms: 100 })));
    expect(error).toMatchObject({ code: "timeout" });
    expect(error.message).toContain("event loop is blocked");
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe("many calls at once", () => {
  test("calls started in one tick are all answered, each with its own value", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const texts = Array.from({ length: 1000 }, (_, i) => `v${i}`);
    const outcomes = await Promise.all(texts.map((text) => worker.invoke(node("plain", text))));
    expect(outcomes.map((outcome) => outcome.ok && outcome.kind === "node" && outcome.value.text)).toEqual(
      texts.map((text) => text.toUpperCase()),
    );
  });

  test("calls over 64 KiB started in one tick reach the worker while that tick still runs", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const input = "x".repeat(1000);
    const pending = Array.from({ length: 100 }, () => worker.invoke(node("stamp", input)));
    const busyUntil = Date.now() + 500; // the engine is still busy starting the rest of a large fan-out
    while (Date.now() < busyUntil) {}
    const outcomes = await Promise.all(pending);
    const started = outcomes.map((outcome) =>
      outcome.ok && outcome.kind === "node" ? Number(outcome.value.text) : NaN,
    );
    expect(started.every(Number.isFinite)).toBe(true);
    // The first ~64 KiB went out at once and ran during the busy tick; the rest after it.
    expect(Math.min(...started) * 1000).toBeLessThan(busyUntil);
    expect(Math.max(...started) * 1000).toBeGreaterThanOrEqual(busyUntil - 1);
  });
});

describe("ctx.emit limits and ctx.ask", () => {
  test("more than 200 emits in a second fail the attempt with protocol_limit, even when caught", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const emitted: string[] = [];
    // 1,000 emits in a tight loop take a few milliseconds; the 201st within one second trips the limit.
    const outcome = await worker.invoke(node("burst", "1000"), { onEmit: (text) => emitted.push(text) });
    expect(failed(outcome)).toMatchObject({ code: "protocol_limit", phase: "node" });
    expect(failed(outcome).message).toContain("200");
    expect(emitted.length).toBeGreaterThanOrEqual(200);
    expect(emitted.length).toBeLessThan(1000);
    expect(await worker.invoke(node("burst", "200"))).toMatchObject({
      ok: true,
      value: { text: "survived" },
    });
  });

  test("more than 8 MiB of emitted text fails the attempt", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    let count = 0;
    const outcome = await worker.invoke(node("heavy"), { onEmit: () => count++ });
    expect(failed(outcome)).toMatchObject({ code: "protocol_limit" });
    expect(failed(outcome).message).toContain("8 MiB");
    expect(count).toBe(8);
  });

  test("questions reach onAsk and its answers come back", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const asked: unknown[] = [];
    const outcome = await worker.invoke(node("asker"), {
      onAsk: async (questions) => {
        asked.push(questions);
        return questions[0]!.options.length > 0
          ? [{ selected: ["B"], text: "" }]
          : [{ selected: [], text: "Ada" }];
      },
    });
    expect(outcome).toMatchObject({ ok: true, value: { text: "B/Ada", data: { selected: ["B"] } } });
    expect(asked).toEqual([
      [
        {
          question: "Which?",
          header: "",
          options: [
            { label: "A", description: "" },
            { label: "B", description: "" },
          ],
          multi_select: false,
        },
      ],
      [{ question: "Name?", header: "", options: [], multi_select: false }],
    ]);
  });

  test("without onAsk the call fails with ask_unavailable; code that catches it goes on", async () => {
    const worker = await loaded(workspace({ "n.py": NODES }), "n.py");
    const error = failed(await worker.invoke(node("asker")));
    expect(error.code).toBe("ask_unavailable");
    expect(error.message).toContain("not available");
    // Named as a user sees it, never by the SDK's private module.
    expect(error.message).toMatch(/^AskUnavailable: /);
    expect(error.traceback).toMatch(/^AskUnavailable: .*not available/m);
    expect(`${error.message}\n${error.traceback}`).not.toContain("chrys.workflows._");
    expect(await worker.invoke(node("polite_asker"))).toMatchObject({
      ok: true,
      value: { text: "fallback: AskUnavailable" },
    });
    const declined = await worker.invoke(node("asker"), { onAsk: async () => null });
    expect(failed(declined).code).toBe("ask_unavailable");
  });
});

const EDGES = workflowSource(
  `
def src(value):
    print("in src")
    return value
def sink(value):
    return value
nodes = {name: wf.python(name, src if name == "src" else sink) for name in ["src", "a", "b", "c", "d", "e", "f", "x", "y", "z"]}
wf.start(nodes["src"])
wf.edge(nodes["src"], nodes["a"], when=lambda v: "a" in v.text)
wf.edge(nodes["src"], nodes["b"], when=lambda v: "b" in v.text)
wf.edge(nodes["src"], nodes["z"])
def raising(v):
    raise KeyError(v.text)
def not_bool(v):
    return "yes"
def slow(v):
    time.sleep(1)
    return True
wf.edge(nodes["src"], nodes["e"], when=lambda v: v.text == "raise" and raising(v))
wf.edge(nodes["src"], nodes["f"], when=lambda v: v.text == "nonbool" and not_bool(v) or v.text == "slow" and slow(v))
wf.switch(nodes["src"], [(lambda v: "1" in v.text, nodes["c"]), (lambda v: "2" in v.text, nodes["d"])], default=nodes["x"])
def until(v):
    if v.text == "raise":
        raise RuntimeError("until broke")
    if v.text == "nonbool":
        return 1
    return v.text == "stop"
body = lambda scope: (lambda n: (n, n))(scope.python("inner", sink))
loop = wf.loop("loop", body, until, max_iterations=3)
wf.edge(nodes["src"], loop)
def combine(sources):
    if sources[0].value.text == "raise":
        raise ValueError("combine broke")
    return " + ".join(f"{s.node_id}@{s.activation_id}={s.value.text}" for s in sources)
wf.join([nodes["a"], nodes["b"]], nodes["y"], combine=combine)
wf.output(nodes["src"])
`,
  "import time",
);

const CONDITIONS = {
  when: ["src->a", "src->b", "src->e", "src->f"],
  switch: { cases: ["src->c", "src->d"], default: "src->x" },
};

describe("outgoing conditions in the same round trip", () => {
  test.each([
    ["ab", ["src->a", "src->b", "src->x"]],
    ["a1", ["src->a", "src->c"]],
    ["b12", ["src->b", "src->c"]],
    ["2", ["src->d"]],
  ])("input %s passes %j", async (text, passed) => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const outcome = await worker.invoke(node("src", text, { conditions: CONDITIONS }));
    expect(outcome).toMatchObject({
      ok: true,
      kind: "node",
      value: { text },
      passed,
      output: { text: "in src\n" },
    });
  });

  test("a raising condition fails the node (not a false condition)", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const error = failed(await worker.invoke(node("src", "raise", { conditions: CONDITIONS })));
    expect(error).toMatchObject({ code: "exception", phase: "conditions", edge: "src->e" });
    expect(error.message).toBe("the condition of edge src->e raised KeyError: 'raise'");
    expect(error.traceback).toContain("in raising");
  });

  test("a condition returning something other than a bool fails with invalid_result", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const error = failed(await worker.invoke(node("src", "nonbool", { conditions: CONDITIONS })));
    expect(error).toMatchObject({ code: "invalid_result", phase: "conditions", edge: "src->f" });
    expect(error.message).toContain("returned str 'yes'; it must return True or False");
  });

  test("the condition batch has its own limit, apart from the node timeout", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const started = Date.now();
    const outcome = await worker.invoke(
      node("src", "slow", { conditions: CONDITIONS, timeout_ms: 60_000, conditions_timeout_ms: 300 }),
    );
    expect(failed(outcome)).toMatchObject({ code: "timeout", phase: "conditions" });
    expect(Date.now() - started).toBeLessThan(900);
    expect(outcome.leaked_threads).toBe(1);
  });
});

describe("conditions of a node whose value is known (loop or join sources, manual retry)", () => {
  test.each([
    ["ab", ["src->a", "src->b", "src->x"]],
    ["a1", ["src->a", "src->c"]],
  ])("input %s passes %j without running the node function", async (text, passed) => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const outcome = await worker.invoke({
      kind: "conditions",
      source: "src",
      input: { text, data: null },
      conditions: CONDITIONS,
      timeout_ms: null,
    });
    expect(outcome).toMatchObject({ ok: true, kind: "conditions", passed, output: { text: "" } });
  });

  test("a raising condition fails the batch with its edge", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const error = failed(
      await worker.invoke({
        kind: "conditions",
        source: "src",
        input: { text: "raise", data: null },
        conditions: CONDITIONS,
        timeout_ms: null,
      }),
    );
    expect(error).toMatchObject({ code: "exception", phase: "conditions", edge: "src->e" });
  });

  test("the batch shares one limit", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const outcome = await worker.invoke({
      kind: "conditions",
      source: "src",
      input: { text: "slow", data: null },
      conditions: CONDITIONS,
      timeout_ms: 300,
    });
    expect(failed(outcome)).toMatchObject({ code: "timeout", phase: "conditions" });
  });
});

describe("until and combine", () => {
  test.each([
    ["stop", { ok: true, kind: "until", stop: true }],
    ["go on", { ok: true, kind: "until", stop: false }],
    ["nonbool", { ok: false, error: { code: "invalid_result", phase: "until" } }],
    [
      "raise",
      {
        ok: false,
        error: {
          code: "exception",
          phase: "until",
          message: "the until condition raised RuntimeError: until broke",
        },
      },
    ],
  ])("until on %s", async (text, expected) => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    expect(
      await worker.invoke({ kind: "until", loop: "loop", input: { text, data: null }, timeout_ms: null }),
    ).toMatchObject(expected);
  });

  test("combine receives SourceValues in the given order and returns a value", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const sources = [
      { node_id: "a", activation_id: "a@iter#1", value: { text: "one", data: null } },
      { node_id: "b", activation_id: "b@iter#1", value: { text: "two", data: { k: 1 } } },
    ];
    expect(await worker.invoke({ kind: "combine", join: "join:y", sources, timeout_ms: null })).toMatchObject(
      {
        ok: true,
        kind: "combine",
        value: { text: "a@a@iter#1=one + b@b@iter#1=two", data: null },
      },
    );
    const broken = [{ ...sources[0]!, value: { text: "raise", data: null } }];
    expect(
      failed(await worker.invoke({ kind: "combine", join: "join:y", sources: broken, timeout_ms: null })),
    ).toMatchObject({
      code: "exception",
      phase: "combine",
    });
  });

  test("combine sources over 12 MiB fail with value_too_large without reaching the worker", async () => {
    const worker = await loaded(workspace({ "e.py": EDGES }), "e.py");
    const big = { text: "x".repeat(7 * 1024 * 1024), data: null };
    const sources = [
      { node_id: "a", activation_id: "a@iter#1", value: big },
      { node_id: "b", activation_id: "b@iter#1", value: big },
    ];
    const error = failed(await worker.invoke({ kind: "combine", join: "join:y", sources, timeout_ms: null }));
    expect(error).toMatchObject({ code: "value_too_large", phase: "combine" });
    expect(error.message).toContain("12,582,912");
  });
});
