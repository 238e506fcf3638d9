import { indexDefinition } from "@icode/workflow-graph";
import { describe, expect, it } from "vitest";
import { isSchedulerError } from "./errors";
import { buildGraphIndex } from "./graph-index";
import { agent, def, edge, fallback, join, kase, loop, py, when } from "./testing";

function invalid(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    if (isSchedulerError(error) && error.code === "definition_invalid") return error.message;
    throw error;
  }
  throw new Error("expected definition_invalid");
}

describe("buildGraphIndex", () => {
  it("orders incoming edges by declaration, and a join's by its sources", () => {
    const index = buildGraphIndex(
      def({
        start: "s",
        outputs: ["d", "m"],
        nodes: [py("s"), py("a"), py("b"), join("d", ["b", "a"]), py("d"), py("m")],
        edges: [
          edge("s", "b"),
          edge("s", "a"),
          edge("a", "join:d"),
          edge("b", "join:d"),
          edge("join:d", "d"),
          edge("b", "m"),
          edge("a", "m"),
        ],
      }),
    );
    const incoming = (id: string) => index.byId.get(id)!.incoming.map((e) => e.key);
    expect(incoming("join:d")).toEqual(["b->join:d", "a->join:d"]);
    expect(incoming("m")).toEqual(["b->m", "a->m"]);
    expect(incoming("d")).toEqual(["join:d->d"]);
    expect(index.edgeCount).toBe(7);
  });

  it("builds one condition batch per source: when edges, then switch cases in index order and the default", () => {
    const index = buildGraphIndex(
      def({
        start: "s",
        outputs: ["x"],
        nodes: [py("s"), py("w"), py("c0"), py("c1"), py("x"), py("plain")],
        edges: [
          kase("s", "c1", 1),
          when("s", "w"),
          fallback("s", "x"),
          kase("s", "c0", 0),
          edge("s", "plain"),
        ],
      }),
    );
    expect(index.byId.get("s")!.conditions).toEqual({
      when: ["s->w"],
      switch: { cases: ["s->c0", "s->c1"], default: "s->x" },
    });
    expect(index.byId.get("w")!.conditions).toBeNull();
  });

  it("applies the Retry and timeout defaults", () => {
    const index = buildGraphIndex(
      def({ start: "p", outputs: ["a"], nodes: [py("p"), agent("a")], edges: [edge("p", "a")] }),
    );
    expect(index.byId.get("p")).toMatchObject({ maxAttempts: 1, backoffMs: 0, timeoutMs: 300_000 });
    expect(index.byId.get("a")).toMatchObject({ maxAttempts: 3, backoffMs: 0, timeoutMs: null });
  });

  it("records loop bodies, entries and exits", () => {
    const index = buildGraphIndex(
      def({
        start: "L",
        outputs: ["L"],
        nodes: [loop("L", "e", "x"), py("e", { scope: "L" }), py("x", { scope: "L" })],
        edges: [edge("e", "x", null, "L")],
      }),
    );
    const L = index.byId.get("L")!;
    expect(L.body.map((i) => index.nodes[i]!.id)).toEqual(["e", "x"]);
    expect(index.nodes[L.entry]!.id).toBe("e");
    expect(index.nodes[L.exit]!.id).toBe("x");
    expect(index.topLevelCount).toBe(1);
  });

  it("rejects what would make a run hang or misbehave", () => {
    const base = { start: "a", outputs: ["a"] };
    expect(invalid(() => buildGraphIndex(def({ ...base, nodes: [py("a"), py("a")] })))).toContain(
      "declared twice",
    );
    expect(
      invalid(() => buildGraphIndex(def({ ...base, nodes: [py("a")], edges: [edge("a", "zz")] }))),
    ).toContain('unknown node "zz"');
    expect(
      invalid(() =>
        buildGraphIndex(
          def({
            ...base,
            nodes: [py("a"), py("b"), py("c")],
            edges: [edge("a", "b"), edge("b", "c"), edge("c", "b")],
          }),
        ),
      ),
    ).toContain("cycle");
    expect(invalid(() => buildGraphIndex(def({ ...base, nodes: [py("a"), py("b")] })))).toContain(
      "no incoming edge",
    );
    expect(
      invalid(() =>
        buildGraphIndex(def({ ...base, nodes: [py("a"), py("b")], edges: [edge("a", "b"), edge("a", "b")] })),
      ),
    ).toContain("declared twice");
    expect(
      invalid(() => buildGraphIndex(def({ ...base, nodes: [py("a"), py("b")], edges: [kase("a", "b", 0)] }))),
    ).toContain("default");
    expect(
      invalid(() =>
        buildGraphIndex(
          def({
            ...base,
            nodes: [py("a"), loop("L", "e", "e"), py("e", { scope: "L" })],
            edges: [edge("a", "L"), edge("a", "e")],
          }),
        ),
      ),
    ).toContain("loop body boundary");
  });

  it("takes a join's edges from its sources, keeping declared conditions and adding the missing edges", () => {
    const index = buildGraphIndex(
      def({
        start: "s",
        outputs: ["d"],
        nodes: [py("s"), py("a"), py("b"), join("d", ["b", "a"]), py("d")],
        edges: [edge("s", "a"), edge("s", "b"), when("a", "join:d")],
      }),
    );
    const into = index.byId.get("join:d")!.incoming;
    expect(into.map((e) => [e.key, e.condition])).toEqual([
      ["b->join:d", null],
      ["a->join:d", { kind: "when" }],
    ]);
    expect(index.byId.get("d")!.incoming.map((e) => e.key)).toEqual(["join:d->d"]);
    expect(index.byId.get("nobody")).toBeUndefined();
  });

  it("rejects join edges the join does not declare, twice-declared join edges and unknown scopes", () => {
    const joined = (edges: ReturnType<typeof edge>[]) =>
      def({
        start: "s",
        outputs: ["d"],
        nodes: [py("s"), py("a"), py("b"), join("d", ["a"]), py("d")],
        edges: [edge("s", "a"), edge("s", "b"), ...edges],
      });
    expect(invalid(() => buildGraphIndex(joined([edge("b", "join:d")])))).toBe(
      "edge b->join:d enters a join, but its source is not one of the join's sources",
    );
    expect(invalid(() => buildGraphIndex(joined([edge("a", "join:d"), edge("a", "join:d")])))).toBe(
      "edge a->join:d is declared twice",
    );
    expect(
      invalid(() => buildGraphIndex(def({ start: "a", outputs: ["a"], nodes: [py("a", { scope: "L" })] }))),
    ).toBe('the scope of node "a" names unknown node "L"');
  });

  it("runs on the index @icode/workflow-graph built for the same Definition", () => {
    const d = def({ start: "a", outputs: ["b"], nodes: [py("a"), py("b")], edges: [edge("a", "b")] });
    const graph = indexDefinition(d);
    const index = buildGraphIndex(d);
    expect(index.nodes.map((n) => n.index)).toEqual(index.nodes.map((n) => graph.numbers.get(n.id)));
    expect(indexDefinition(d)).toBe(graph);
  });

  it("caches the index per Definition object", () => {
    const d = def({ start: "a", outputs: ["a"], nodes: [py("a")] });
    expect(buildGraphIndex(d)).toBe(buildGraphIndex(d));
  });
});
