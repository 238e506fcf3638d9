import { describe, expect, it } from "vitest";
import { agent, chainDef, def, edge, fallback, harness, kase, py, when } from "./testing";

describe("input scheduling", () => {
  it("passes one source's value through unchanged, data kept (the same object)", async () => {
    const value = { text: "payload", data: { k: [1, 2] } };
    let seen: unknown = null;
    const h = harness(
      def({ start: "a", outputs: ["b"], nodes: [py("a"), py("b")], edges: [edge("a", "b")] }),
      {
        nodes: {
          a: () => value,
          b: (input) => {
            seen = input;
            return "done";
          },
        },
      },
    );
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(seen).toBe(value);
  });

  it("merges several sources under ## headings in incoming-edge declaration order, data null", async () => {
    let seen: unknown = null;
    // c finishes long before b, but b->d is declared first.
    const h = harness(
      def({
        start: "a",
        outputs: ["d"],
        nodes: [py("a"), py("b"), py("c"), py("d")],
        edges: [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")],
      }),
      {
        nodes: {
          b: async (_, ctx) => {
            await ctx.sleep(5_000);
            return { text: "one", data: 1 };
          },
          c: () => ({ text: "two", data: 2 }),
          d: (input) => {
            seen = input;
            return "merged";
          },
        },
      },
    );
    await h.finish();
    expect(seen).toEqual({ text: "## b\none\n\n## c\ntwo", data: null });
    expect(h.sink.of("node_started").find((e) => e.node_id === "d")?.sources).toEqual([
      "b@iter#1",
      "c@iter#1",
    ]);
  });

  it("waits until every incoming edge has decided before running", async () => {
    const h = harness(
      def({
        start: "a",
        outputs: ["d"],
        nodes: [py("a"), py("b"), py("c"), py("d")],
        edges: [edge("a", "b"), edge("a", "c"), edge("b", "d"), edge("c", "d")],
      }),
      {
        nodes: {
          b: async (_, ctx) => {
            await ctx.sleep(10_000);
            return "b";
          },
        },
      },
    );
    await h.finish();
    const d = h.fakes.calls.find((c) => c.id === "d")!;
    const b = h.fakes.calls.find((c) => c.id === "b")!;
    expect(d.at - b.at).toBe(10_000);
  });

  it("skips a node with no passing source, and successors that depend only on skipped nodes", async () => {
    // a -when(false)-> b -> c ; a -> d ; b -> d   (d still gets a's value alone)
    let dInput: unknown = null;
    const h = harness(
      def({
        start: "a",
        outputs: ["c", "d"],
        nodes: [py("a"), py("b"), py("c"), py("d")],
        edges: [when("a", "b"), edge("b", "c"), edge("a", "d"), edge("b", "d")],
      }),
      {
        nodes: {
          a: () => ({ text: "A", data: { x: 1 } }),
          d: (input) => {
            dInput = input;
            return "D";
          },
        },
        conditions: { "a->b": () => false },
      },
    );
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.sink.of("node_skipped").map((e) => [e.node_id, e.reason])).toEqual([
      ["b", "no_input"],
      ["c", "no_input"],
    ]);
    expect(h.fakes.calls.filter((c) => c.kind === "python").map((c) => c.id)).toEqual(["a", "d"]);
    expect(dInput).toEqual({ text: "A", data: { x: 1 } });
    expect(result.outputs.map((o) => o.node_id)).toEqual(["d"]);
  });
});

describe("edge decisions", () => {
  const fanOut = () =>
    def({
      start: "s",
      outputs: ["x", "y", "z"],
      nodes: [py("s"), py("x"), py("y"), py("z")],
      edges: [when("s", "x"), when("s", "y"), when("s", "z")],
    });

  it("evaluates when edges independently: every true condition passes the value", async () => {
    const h = harness(fanOut(), {
      conditions: { "s->x": () => true, "s->y": () => false, "s->z": () => true },
    });
    const result = await h.finish();
    expect(result.outputs.map((o) => o.node_id)).toEqual(["x", "z"]);
    expect(h.sink.of("edges_decided")).toMatchObject([
      { node_id: "s", passed: ["s->x", "s->z"], blocked: ["s->y"] },
    ]);
    // One executor call decides the whole batch.
    expect(h.fakes.calls.filter((c) => c.kind === "conditions")).toHaveLength(1);
  });

  const switchDef = () =>
    def({
      start: "s",
      outputs: ["c0", "c1", "c2", "d"],
      nodes: [py("s"), py("c0"), py("c1"), py("c2"), py("d")],
      edges: [kase("s", "c0", 0), kase("s", "c1", 1), kase("s", "c2", 2), fallback("s", "d")],
    });

  it("switch selects the first true case and evaluates no later case", async () => {
    const h = harness(switchDef(), {
      conditions: { "s->c0": () => false, "s->c1": () => true, "s->c2": () => true },
    });
    const result = await h.finish();
    expect(result.outputs.map((o) => o.node_id)).toEqual(["c1"]);
    expect(h.fakes.calls.filter((c) => c.kind === "condition").map((c) => c.id)).toEqual(["s->c0", "s->c1"]);
    expect(h.sink.of("node_skipped").map((e) => e.node_id)).toEqual(["c0", "c2", "d"]);
  });

  it("switch falls back to the default when no case is true", async () => {
    const h = harness(switchDef(), {
      conditions: { "s->c0": () => false, "s->c1": () => false, "s->c2": () => false },
    });
    const result = await h.finish();
    expect(result.outputs.map((o) => o.node_id)).toEqual(["d"]);
  });

  it("takes a Python node's edge decisions from its own result when batched (no extra call)", async () => {
    const h = harness(fanOut(), { batch: true, conditions: { "s->y": () => false } });
    const result = await h.finish();
    expect(result.outputs.map((o) => o.node_id)).toEqual(["x", "z"]);
    expect(h.fakes.calls.filter((c) => c.kind === "conditions")).toHaveLength(0);
    expect(h.fakes.requests[0]).toMatchObject({
      conditions: { when: ["s->x", "s->y", "s->z"], switch: null },
    });
  });

  it("evaluates an agent node's conditions with one conditions call", async () => {
    const h = harness(
      def({
        start: "s",
        outputs: ["x", "y"],
        nodes: [agent("s"), py("x"), py("y")],
        edges: [when("s", "x"), edge("s", "y")],
      }),
      { conditions: { "s->x": () => false } },
    );
    const result = await h.finish();
    expect(result.outputs.map((o) => o.node_id)).toEqual(["y"]);
    expect(h.fakes.calls.filter((c) => c.kind === "conditions").map((c) => c.id)).toEqual(["s"]);
  });

  for (const batch of [false, true]) {
    it(`a raising condition fails the SOURCE node, never retried (${batch ? "batched" : "separate call"})`, async () => {
      const h = harness(
        def({
          start: "s",
          outputs: ["s", "x"],
          nodes: [py("s", { retry: { max_attempts: 3, backoff: 0 } }), py("x")],
          edges: [when("s", "x")],
        }),
        {
          batch,
          conditions: {
            "s->x": () => {
              throw new Error("boom");
            },
          },
        },
      );
      const result = await h.finish();
      expect(result).toMatchObject({
        outcome: "node_failed",
        node_id: "s",
        error_class: "condition_failed",
        reason: "",
      });
      expect(h.fakes.calls.filter((c) => c.kind === "python")).toHaveLength(1);
      expect(h.sink.of("attempt_failed")).toMatchObject([{ phase: "conditions", will_retry: false }]);
      expect(h.sink.of("node_failed")).toMatchObject([
        { node_id: "s", phase: "node", error: { class: "condition_failed" } },
      ]);
      expect(h.sink.of("node_completed")).toEqual([]);
      expect(result.outputs).toEqual([]);
    });
  }

  it("fails the source with condition_timeout when the batch of conditions runs past 30 s", async () => {
    const h = harness(
      def({
        start: "s",
        outputs: ["x"],
        nodes: [py("s"), py("x"), py("y")],
        edges: [when("s", "x"), when("s", "y")],
      }),
      {
        conditions: {
          "s->x": async () => true,
          "s->y": () => new Promise<boolean>(() => {}),
        },
      },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "s", error_class: "condition_timeout" });
    const failed = h.sink.of("node_failed")[0]!;
    const done = h.sink.of("attempt_started")[0]!;
    expect(failed.ts - done.ts).toBe(30_000);
  });

  it("switches from the node timeout to the 30 s condition limit when a batched executor says so", async () => {
    const h = harness(
      def({
        start: "s",
        outputs: ["x"],
        nodes: [py("s", { timeout: 1000 }), py("x")],
        edges: [when("s", "x")],
      }),
      { batch: true, conditions: { "s->x": () => new Promise<boolean>(() => {}) } },
    );
    const result = await h.finish();
    // The 1000 s node timeout is replaced by the 30 s condition limit once the function returned.
    expect(result).toMatchObject({ outcome: "node_failed", error_class: "condition_timeout" });
    expect(h.clock.now() - 1_000).toBe(30_000);
  });

  it("rejects decisions that select no switch branch as an executor defect (internal_error)", async () => {
    const h = harness(
      switchDef(),
      {},
      {
        patch: { evaluateConditions: async () => ({ status: "decided", decisions: { passed: [] } }) },
      },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "s", error_class: "internal_error" });
    expect(result.error).toContain("exactly one");
  });

  it("fails the node with internal_error when an executor throws instead of returning a result", async () => {
    const h = harness(
      chainDef(["a", "b"]),
      {},
      {
        patch: {
          runPython: () => {
            throw new Error("bridge bug");
          },
        },
      },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "a", error_class: "internal_error" });
  });
});

describe("parallelism and concurrency", () => {
  it("runs ready Python branches in parallel", async () => {
    const h = harness(
      def({
        start: "s",
        outputs: ["j"],
        nodes: [py("s"), py("a"), py("b"), py("c"), py("j")],
        edges: [
          edge("s", "a"),
          edge("s", "b"),
          edge("s", "c"),
          edge("a", "j"),
          edge("b", "j"),
          edge("c", "j"),
        ],
      }),
      {
        nodes: Object.fromEntries(
          ["a", "b", "c"].map((id) => [
            id,
            async (_: unknown, ctx: { sleep(ms: number): Promise<boolean> }) => {
              await ctx.sleep(10_000);
              return id;
            },
          ]),
        ),
      },
    );
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.fakes.maxActive.python).toBe(3);
    expect(h.clock.now() - 1_000).toBe(10_000);
  });

  it("allows at most four concurrent agent attempts; the others wait for a slot", async () => {
    const ids = ["a1", "a2", "a3", "a4", "a5", "a6"];
    const h = harness(
      def({
        start: "s",
        outputs: ids,
        nodes: [py("s"), ...ids.map((id) => agent(id))],
        edges: ids.map((id) => edge("s", id)),
      }),
      {
        nodes: Object.fromEntries(
          ids.map((id) => [
            id,
            async (_: unknown, ctx: { sleep(ms: number): Promise<boolean> }) => {
              await ctx.sleep(10_000);
              return id;
            },
          ]),
        ),
      },
    );
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.fakes.maxActive.agent).toBe(4);
    const starts = h.fakes.calls.filter((c) => c.kind === "agent").map((c) => c.at - 1_000);
    expect(starts).toEqual([0, 0, 0, 0, 10_000, 10_000]);
    expect(result.outputs.map((o) => o.node_id)).toEqual(ids);
  });
});

describe("output collection", () => {
  it("collects outputs in output() declaration order, completed nodes only, no placeholders", async () => {
    const h = harness(
      def({
        start: "a",
        outputs: ["c", "a", "b"],
        nodes: [py("a"), py("b"), py("c")],
        edges: [when("a", "b"), edge("a", "c")],
      }),
      {
        nodes: {
          a: () => ({ text: "A", data: [1] }),
          c: async (_, ctx) => {
            await ctx.sleep(1);
            return "C";
          },
        },
        conditions: { "a->b": () => false },
      },
    );
    const result = await h.finish();
    expect(result.outputs).toEqual([
      { node_id: "c", activation_id: "c@iter#1", text: "C", data: null },
      { node_id: "a", activation_id: "a@iter#1", text: "A", data: [1] },
    ]);
  });

  it("completes with no outputs when every output node was skipped", async () => {
    const h = harness(
      def({ start: "a", outputs: ["b"], nodes: [py("a"), py("b")], edges: [when("a", "b")] }),
      { conditions: { "a->b": () => false } },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [] });
  });

  it("keeps outputs that completed before a failure", async () => {
    const h = harness(
      def({ start: "a", outputs: ["a", "b"], nodes: [py("a"), py("b")], edges: [edge("a", "b")] }),
      {
        nodes: {
          b: () => {
            throw new Error("nope");
          },
        },
      },
    );
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      node_id: "b",
      error: "nope",
      error_class: "exception",
    });
    expect(result.outputs.map((o) => o.node_id)).toEqual(["a"]);
  });
});
