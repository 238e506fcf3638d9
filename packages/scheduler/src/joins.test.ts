import { describe, expect, it } from "vitest";
import { COMBINE_INPUT_LIMIT_BYTES } from "./limits";
import { def, edge, harness, join, py, when } from "./testing";
import type { SourceValue } from "./value";

/** s → a, s → b, s → c; join([c, a, b], d). Sources `a`/`b`/`c` can be switched off with a `when` edge. */
function joinDef(options: { combine: boolean; conditional?: boolean }) {
  const into = options.conditional ? when : edge;
  return def({
    start: "s",
    outputs: ["d"],
    nodes: [
      py("s"),
      py("a"),
      py("b"),
      py("c"),
      join("d", ["c", "a", "b"], { combine: options.combine }),
      py("d"),
    ],
    edges: [into("s", "a"), into("s", "b"), into("s", "c"), edge("join:d", "d")],
  });
}

describe("join", () => {
  it("merges by default in sources declaration order, not completion order", async () => {
    let seen: unknown = null;
    const h = harness(joinDef({ combine: false }), {
      nodes: {
        c: async (_, ctx) => {
          await ctx.sleep(50);
          return "C";
        },
        a: () => ({ text: "A", data: 1 }),
        b: () => "B",
        d: (input) => {
          seen = input;
          return "D";
        },
      },
    });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(seen).toEqual({ text: "## c\nC\n\n## a\nA\n\n## b\nB", data: null });
    expect(h.sink.of("node_completed").find((e) => e.node_id === "join:d")).toMatchObject({
      activation_id: "join:d@iter#1",
      kind: "join",
      attempt: null,
    });
  });

  it("synthesizes the join's edges from `sources` when the Definition lists only join → target", async () => {
    // joinDef lists no source → join edges; the join still waits for all three sources.
    const h = harness(joinDef({ combine: false }));
    await h.finish();
    const started = h.sink.of("node_started").find((e) => e.node_id === "join:d")!;
    expect(started.sources).toEqual(["c@iter#1", "a@iter#1", "b@iter#1"]);
  });

  it("calls combine with SourceValues in sources order, leaving skipped sources out", async () => {
    let got: readonly SourceValue[] = [];
    const h = harness(joinDef({ combine: true, conditional: true }), {
      nodes: {
        a: () => ({ text: "A", data: { n: 1 } }),
        c: async (_, ctx) => {
          await ctx.sleep(9);
          return "C";
        },
      },
      conditions: { "s->b": () => false },
      combine: {
        "join:d": (sources) => {
          got = sources;
          return { text: "combined", data: sources.length };
        },
      },
    });
    const result = await h.finish();
    expect(got).toEqual([
      { node_id: "c", activation_id: "c@iter#1", value: { text: "C", data: null } },
      { node_id: "a", activation_id: "a@iter#1", value: { text: "A", data: { n: 1 } } },
    ]);
    expect(result.outputs).toEqual([{ node_id: "d", activation_id: "d@iter#1", text: "d", data: null }]);
  });

  it("calls combine even for a single source", async () => {
    const h = harness(joinDef({ combine: true, conditional: true }), {
      conditions: { "s->b": () => false, "s->c": () => false },
      combine: { "join:d": (sources) => `only ${sources.map((x) => x.node_id).join()}` },
      nodes: { d: (input) => input },
    });
    const result = await h.finish();
    expect(h.fakes.calls.filter((c) => c.kind === "combine")).toHaveLength(1);
    expect(result.outputs[0]?.text).toBe("only a");
  });

  for (const combine of [true, false]) {
    it(`skips the join and its destination when no source provides input (combine: ${combine})`, async () => {
      const h = harness(joinDef({ combine, conditional: true }), {
        conditions: { "s->a": () => false, "s->b": () => false, "s->c": () => false },
      });
      const result = await h.finish();
      expect(result).toMatchObject({ outcome: "completed", outputs: [] });
      expect(h.fakes.calls.filter((c) => c.kind === "combine")).toHaveLength(0);
      expect(h.sink.of("node_skipped").map((e) => e.node_id)).toEqual(["a", "b", "c", "join:d", "d"]);
    });
  }

  it("fails the join (node_id join:<dst>) when combine raises, without retrying", async () => {
    const h = harness(joinDef({ combine: true }), {
      combine: {
        "join:d": () => {
          throw new Error("bad combine");
        },
      },
    });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      node_id: "join:d",
      error_class: "combine_failed",
      error: "bad combine",
    });
    expect(h.fakes.calls.filter((c) => c.kind === "combine")).toHaveLength(1);
    expect(h.sink.of("node_failed")).toMatchObject([{ node_id: "join:d", phase: "combine", attempt: null }]);
  });

  it("gives combine its own 30 s limit", async () => {
    const h = harness(joinDef({ combine: true }), { combine: { "join:d": () => new Promise(() => {}) } });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      node_id: "join:d",
      error_class: "combine_timeout",
    });
    expect(h.clock.now() - 1_000).toBe(30_000);
  });

  /** Sources whose SourceValue list serializes to exactly `bytes` bytes of UTF-8 JSON. */
  function sized(bytes: number) {
    const ids = { c: "c@iter#1", a: "a@iter#1", b: "b@iter#1" };
    const frame = JSON.stringify(
      (["c", "a", "b"] as const).map((k) => ({
        node_id: k,
        activation_id: ids[k],
        value: { text: "", data: null },
      })),
    );
    const filler = bytes - Buffer.byteLength(frame);
    // "é" is 2 bytes in UTF-8: the limit counts bytes, not characters.
    const c = "é".repeat(Math.floor(filler / 2)) + (filler % 2 === 1 ? "x" : "");
    return { c: () => c, a: () => "", b: () => "" };
  }

  it("fails with value_too_large when the sources passed to combine exceed 12 MiB of UTF-8 JSON", async () => {
    const h = harness(joinDef({ combine: true }), { nodes: sized(COMBINE_INPUT_LIMIT_BYTES + 1) });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      node_id: "join:d",
      error_class: "value_too_large",
    });
    expect(result.error).toContain("12 MiB");
    expect(h.fakes.calls.filter((c) => c.kind === "combine")).toHaveLength(0);
  });

  it("accepts sources of exactly 12 MiB", async () => {
    const h = harness(joinDef({ combine: true }), {
      nodes: sized(COMBINE_INPUT_LIMIT_BYTES),
      combine: { "join:d": () => "ok" },
    });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.fakes.calls.filter((c) => c.kind === "combine")).toHaveLength(1);
  });
});
