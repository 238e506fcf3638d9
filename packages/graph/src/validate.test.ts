import type { Diagnostic } from "@icode/workflow-errors";
import { DiagnosticSchema } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { caseFile, definitionFromOps, type Op } from "../test/ops";
import { GRAPH_CODES, GRAPH_RULES, GRAPH_WARNINGS } from "./rules/rule";
import type { Definition, Edge, Site } from "./schema";
import { checkDefinition, GRAPH_CHECKS, MAX_SCHEMA_DIAGNOSTICS, validateDefinition } from "./validate";

const py = (name: string): Op => ({ op: "python", name });
const edge = (src: string, dst: string, when = false): Op => ({ op: "edge", src, dst, when });
const chain = (...nodes: string[]): Op => ({ op: "chain", nodes });
const start = (node: string): Op => ({ op: "start", node });
const output = (node: string): Op => ({ op: "output", node });
const loop = (name: string, body: Op[], entry: string, exit: string): Op => ({
  op: "loop",
  name,
  body,
  entry,
  exit,
  max_iterations: 3,
  on_exhausted: "continue",
});

/** A valid base: a → L(x → y) → b, outputs b. Tests break one thing at a time. */
function base(): Definition {
  return definitionFromOps("base", [
    py("a"),
    loop("L", [py("x"), py("y"), edge("x", "y")], "x", "y"),
    py("b"),
    chain("a", "L", "b"),
    start("a"),
    output("b"),
  ]);
}

function findings(definition: unknown) {
  const { diagnostics } = validateDefinition(definition);
  return diagnostics.map((d) => ({ rule: /^([a-z_]+): /.exec(d.message)?.[1] ?? d.code, d }));
}

function errorRules(definition: unknown): string[] {
  return findings(definition)
    .filter((f) => f.d.severity === "error")
    .map((f) => f.rule);
}

function only(definition: unknown, rule: string): Diagnostic[] {
  const all = findings(definition);
  expect(all.map((f) => f.rule)).toEqual(all.map(() => rule));
  expect(all.length).toBeGreaterThan(0);
  return all.map((f) => f.d);
}

const site = (line: number, file = "/w/flow.py"): Site => ({
  file,
  line,
  column: 5,
  end_line: line,
  end_column: 9,
});

describe("validateDefinition", () => {
  it("accepts the valid base with no diagnostics and returns the parsed definition", () => {
    const input = base();
    expect(validateDefinition(input)).toEqual({ definition: input, diagnostics: [] });
  });

  it("emits diagnostics that match the shared Diagnostic schema, stage graph", () => {
    const broken = base();
    broken.edges.push({ ...broken.edges[0]! });
    const { diagnostics } = validateDefinition(broken);
    expect(diagnostics).toHaveLength(1);
    expect(DiagnosticSchema.parse(diagnostics[0])).toEqual(diagnostics[0]);
    expect(diagnostics[0]).toMatchObject({ stage: "graph", code: "manifest_invalid", severity: "error" });
  });

  it("exposes the codes, rule IDs and one check per rule", () => {
    expect(GRAPH_CODES).toEqual([
      "manifest_invalid",
      "loop_exit_all_conditional",
      "loop_exit_may_be_skipped",
    ]);
    const checked = GRAPH_CHECKS.map((rule) => rule.id);
    expect(checked).toEqual([...GRAPH_RULES.filter((id) => id !== "schema"), ...GRAPH_WARNINGS]);
    const phases = GRAPH_CHECKS.map((rule) => rule.phase);
    expect(phases).toEqual([...phases].sort());
  });
});

describe("schema", () => {
  it("names the JSON path of each schema problem and returns no definition", () => {
    const broken = base() as unknown as {
      nodes: Record<string, unknown>[];
      edges: Record<string, unknown>[];
    };
    broken.nodes[0]!["kind"] = "shell";
    broken.edges[1]!["condition"] = { kind: "case", index: -1 };
    const result = validateDefinition(broken);
    expect(result.definition).toBeNull();
    // In the schema's key order, which is code point order (see sortedObject): edges before nodes.
    const [edge, node] = result.diagnostics;
    expect(result.diagnostics).toHaveLength(2);
    expect(node!.message).toMatch(/^schema: nodes\[0\]\.kind: /);
    expect(edge!.message).toMatch(/^schema: edges\[1\]\.condition(\.index)?: /);
    expect(node).toMatchObject({ code: "manifest_invalid", stage: "graph", node: "a" });
    expect(edge!.node).toBe("a->L");
    // The item's site is still used when it is well formed.
    expect(node!.file).toBe(caseFile("base"));
  });

  it("reports a value that is not an object at all", () => {
    for (const input of [null, 42, "graph", []]) {
      const { definition, diagnostics } = validateDefinition(input);
      expect(definition).toBeNull();
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]!.message).toMatch(/^schema: the definition: /);
    }
  });

  it("maps an empty node name to invalid_name and a join without sources to join_sources", () => {
    const empty = base();
    empty.nodes[0]!.id = "";
    expect(errorRules(empty)).toEqual(["invalid_name"]);
    const noSources = definitionFromOps("j", [py("a"), py("b"), { op: "join", sources: [], dst: "b" }]);
    expect(errorRules(noSources)).toEqual(["join_sources"]);
  });

  it(`reports at most ${MAX_SCHEMA_DIAGNOSTICS} problems and sums up the rest`, () => {
    const broken = base() as unknown as { nodes: unknown[] };
    broken.nodes = Array.from({ length: 80 }, (_, i) => ({ id: `n${i}` }));
    const { diagnostics } = validateDefinition(broken);
    expect(diagnostics.length).toBe(MAX_SCHEMA_DIAGNOSTICS + 1);
    expect(diagnostics.at(-1)!.message).toMatch(/^schema: \d+ more schema problems not shown$/);
  });
});

describe("names and references (phase 1)", () => {
  it("invalid_name: a join node must be named join:<target>", () => {
    const def = definitionFromOps("j", [
      py("a"),
      py("b"),
      py("c"),
      chain("a", "b"),
      { op: "join", sources: ["b"], dst: "c" },
      start("a"),
      output("c"),
    ]);
    expect(errorRules(def)).toEqual([]);
    const join = def.nodes.find((n) => n.kind === "join")!;
    join.id = "join:other";
    for (const e of def.edges) {
      if (e.target === "join:c") e.target = "join:other";
      if (e.source === "join:c") e.source = "join:other";
    }
    const [d] = only(def, "invalid_name");
    expect(d!.message).toContain('must be named "join:c"');
    expect(d!.node).toBe("join:other");
  });

  it("duplicate_name: each later declaration is reported with the first one's place", () => {
    const def = definitionFromOps("dup", [py("a"), py("a"), py("a"), start("a"), output("a")]);
    const found = only(def, "duplicate_name");
    expect(found.map((d) => d.line)).toEqual([2, 3]);
    expect(found[0]!.message).toContain(`first declared at ${caseFile("dup")}:1`);
  });

  it("duplicate_name: a second join into the same destination", () => {
    const def = definitionFromOps("j2", [
      py("a"),
      py("b"),
      py("d"),
      chain("a", "b"),
      { op: "join", sources: ["a"], dst: "d" },
      { op: "join", sources: ["b"], dst: "d" },
      start("a"),
      output("d"),
    ]);
    const [d] = only(def, "duplicate_name");
    expect(d!.message).toContain("second join");
    expect(d!.node).toBe("join:d");
  });

  it("unknown_node: every kind of reference is checked", () => {
    const def = base();
    def.start = "ghost_start";
    def.outputs.push("ghost_output");
    def.edges.push({ source: "a", target: "ghost_target", scope: null, condition: null, site: site(40) });
    def.edges.push({ source: "ghost_source", target: "b", scope: null, condition: null, site: site(41) });
    def.edges.push({ source: "x", target: "y", scope: "ghost_scope", condition: null, site: site(42) });
    const loopNode = def.nodes.find((n) => n.kind === "loop")!;
    if (loopNode.kind === "loop") loopNode.entry = "ghost_entry";
    def.nodes.push({
      id: "p",
      scope: "ghost_body",
      site: site(43),
      kind: "python",
      timeout: null,
      retry: null,
      is_async: false,
      takes_context: false,
    });
    def.nodes.push({
      id: "join:ghost_dst",
      scope: null,
      site: site(44),
      kind: "join",
      sources: ["ghost_join_source"],
      target: "ghost_dst",
      has_combine: false,
    });
    const found = only(def, "unknown_node");
    const named = found.map((d) => /"(ghost_[a-z_]+)"/.exec(d.message)?.[1]).sort();
    expect(named).toEqual(
      [
        "ghost_body",
        "ghost_dst",
        "ghost_entry",
        "ghost_join_source",
        "ghost_output",
        "ghost_scope",
        "ghost_source",
        "ghost_start",
        "ghost_target",
      ].sort(),
    );
    expect(found.find((d) => d.message.includes("ghost_target"))).toMatchObject({
      node: "a->ghost_target",
      line: 40,
      column: 5,
    });
  });

  it("stops after phase 1, so one mistake is not reported again by later rules", () => {
    // "a" twice: the second is in a loop body; without the gate this would also be a cross-scope edge.
    const def = definitionFromOps("gate", [
      py("a"),
      loop("L", [py("a"), py("z"), edge("a", "z")], "a", "z"),
      edge("a", "L"),
      start("a"),
      output("L"),
    ]);
    expect(errorRules(def)).toEqual(["duplicate_name"]);
  });
});

describe("declarations (phase 2)", () => {
  it("no_start and no_outputs point at build()", () => {
    const def = base();
    def.start = "";
    def.outputs = [];
    def.build_site = site(99);
    const found = findings(def);
    expect(found.map((f) => f.rule)).toEqual(["no_start", "no_outputs"]);
    for (const { d } of found)
      expect(d).toMatchObject({ node: null, line: 99, file: "/w/flow.py", notes: [] });
  });

  it("not_top_level for the start and for each output", () => {
    const def = base();
    def.start = "x";
    def.outputs = ["b", "y"];
    expect(only(def, "not_top_level").map((d) => d.node)).toEqual(["x", "y"]);
  });

  it("duplicate_output once per repeat", () => {
    const def = base();
    def.outputs = ["b", "a", "b", "b"];
    expect(only(def, "duplicate_output").map((d) => d.node)).toEqual(["b", "b"]);
  });

  it("self_edge names the edge", () => {
    const def = base();
    def.edges.push({ source: "b", target: "b", scope: null, condition: { kind: "when" }, site: site(7) });
    expect(only(def, "self_edge")[0]).toMatchObject({ node: "b->b", line: 7 });
  });

  it("duplicate_edge at the later declaration, whatever the conditions", () => {
    const def = base();
    def.edges.push({ source: "a", target: "L", scope: null, condition: { kind: "when" }, site: site(8) });
    expect(only(def, "duplicate_edge")[0]).toMatchObject({ node: "a->L", line: 8 });
  });

  it("cross_scope_edge: an edge declared in another scope than both of its ends", () => {
    const def = base();
    const inner = def.edges.find((e) => e.source === "x")!;
    inner.scope = null;
    const [d] = only(def, "cross_scope_edge");
    expect(d!.message).toContain('joins two nodes in the body of loop "L" but was declared at the top level');
  });

  it("nested_loop and loop_boundary: scope must name a loop", () => {
    const def = base();
    const x = def.nodes.find((n) => n.id === "x")!;
    const nested = definitionFromOps("n", [loop("M", [py("m")], "m", "m")]).nodes;
    for (const node of nested) def.nodes.push(node.scope === null ? { ...node, scope: "L" } : node);
    def.edges.push({ source: "y", target: "M", scope: "L", condition: null, site: site(50) });
    expect(errorRules(def)).toEqual(["nested_loop"]);
    x.scope = "b";
    expect(errorRules(def)).toContain("loop_boundary");
  });

  it("loop_boundary: entry and exit must be in that loop's body", () => {
    const def = base();
    const loopNode = def.nodes.find((n) => n.kind === "loop")!;
    if (loopNode.kind === "loop") {
      loopNode.entry = "a";
      loopNode.exit = "b";
    }
    const found = only(def, "loop_boundary");
    expect(found.map((d) => d.message)).toEqual([
      'loop_boundary: the entry "a" of loop "L" is a top-level node, not a node of this loop\'s body',
      'loop_boundary: the exit "b" of loop "L" is a top-level node, not a node of this loop\'s body',
    ]);
  });

  describe("join shape", () => {
    const joined = () =>
      definitionFromOps("join", [
        py("a"),
        py("b"),
        py("c"),
        py("d"),
        edge("a", "b"),
        edge("a", "c"),
        { op: "join", sources: ["b", "c"], dst: "d" },
        start("a"),
        output("d"),
      ]);

    it("is valid as join() emits it", () => {
      expect(errorRules(joined())).toEqual([]);
    });

    it("join_sources: a listed source with no edge into the join node", () => {
      const def = joined();
      def.edges = def.edges.filter((e) => !(e.source === "c" && e.target === "join:d"));
      def.edges.push({ source: "c", target: "d", scope: null, condition: null, site: null });
      expect(errorRules(def)).toEqual(["join_destination_edge", "join_sources"]);
      def.edges.pop();
      const [d] = only(def, "join_sources");
      expect(d!.message).toContain('"c" has no edge into "join:d"');
    });

    it("join_sources: an edge into the join node from a node that is not a source", () => {
      const def = joined();
      def.edges.push({ source: "a", target: "join:d", scope: null, condition: null, site: site(60) });
      expect(only(def, "join_sources")[0]).toMatchObject({ node: "a->join:d", line: 60 });
    });

    it("join_sources and not duplicate_edge for a source listed twice", () => {
      const def = definitionFromOps("twice", [
        py("a"),
        py("b"),
        edge("a", "b"),
        py("d"),
        { op: "join", sources: ["b", "b"], dst: "d" },
        start("a"),
        output("d"),
      ]);
      expect(errorRules(def)).toEqual(["join_sources"]);
    });

    it("join_destination_edge: no edge from the join node to its destination", () => {
      const def = joined();
      def.edges = def.edges.filter((e) => e.source !== "join:d");
      expect(errorRules(def)).toEqual(["join_destination_edge"]);
    });

    it("join_destination_edge: the join node leads elsewhere too", () => {
      const def = joined();
      def.edges.push({ source: "join:d", target: "b", scope: null, condition: null, site: site(61) });
      expect(only(def, "join_destination_edge")[0]).toMatchObject({ node: "join:d->b", line: 61 });
    });
  });

  describe("switch shape", () => {
    const switched = () =>
      definitionFromOps("sw", [
        py("a"),
        py("b"),
        py("c"),
        py("d"),
        { op: "switch", src: "a", cases: ["b", "c"], default: "d" },
        start("a"),
        output("b"),
      ]);
    const switchEdges = (def: Definition): Edge[] => def.edges.filter((e) => e.condition?.kind !== "when");

    it("is valid as switch() emits it", () => {
      expect(errorRules(switched())).toEqual([]);
    });

    it("switch_cases: indices must run 0..n-1 in order", () => {
      const def = switched();
      const second = switchEdges(def)[1]!;
      second.condition = { kind: "case", index: 2 };
      const [d] = only(def, "switch_cases");
      expect(d!.message).toContain("has case 2");
      expect(d!.node).toBe("a->c");
    });

    it("switch_cases: cases without a default", () => {
      const def = switched();
      def.edges = def.edges.filter((e) => e.condition?.kind !== "default");
      def.edges.push({ source: "b", target: "d", scope: null, condition: null, site: null });
      expect(only(def, "switch_cases")[0]!.message).toContain("has no default edge");
    });

    it("switch_twice: a second group on the same source, at its first edge", () => {
      const def = switched();
      def.nodes.push(...definitionFromOps("more", [py("e"), py("f")]).nodes);
      def.edges.push({
        source: "a",
        target: "e",
        scope: null,
        condition: { kind: "case", index: 0 },
        site: site(70),
      });
      def.edges.push({
        source: "a",
        target: "f",
        scope: null,
        condition: { kind: "default" },
        site: site(70),
      });
      expect(only(def, "switch_twice")[0]).toMatchObject({ node: "a->e", line: 70 });
    });

    it("switch_twice: two defaults on one source", () => {
      const def = switched();
      def.nodes.push(...definitionFromOps("more", [py("e")]).nodes);
      def.edges.push({ source: "a", target: "e", scope: null, condition: { kind: "default" }, site: null });
      expect(errorRules(def)).toEqual(["switch_twice"]);
    });
  });
});

describe("whole graph (phase 3)", () => {
  it("unreachable: every top-level node not reached from the start, every body node not reached from the entry", () => {
    const def = base();
    def.nodes.push(...definitionFromOps("orphans", [py("o1"), py("o2"), chain("o1", "o2")]).nodes);
    def.edges.push({ source: "o1", target: "o2", scope: null, condition: null, site: null });
    const body = definitionFromOps("orphans", [loop("L", [py("z")], "z", "z")]).nodes.filter(
      (n) => n.id === "z",
    );
    def.nodes.push(...body);
    expect(only(def, "unreachable").map((d) => d.node)).toEqual(["o1", "o2", "z"]);
  });

  it("unreachable: a node reached only through a cross-scope path is not counted twice", () => {
    const def = base();
    def.edges = def.edges.filter((e) => e.source !== "x");
    expect(only(def, "unreachable").map((d) => d.node)).toEqual(["y"]);
  });

  it("cycle: reports each cycle once, at the edge declared last, with its path", () => {
    const def = definitionFromOps("cycles", [
      py("a"),
      py("b"),
      py("c"),
      py("d"),
      py("e"),
      chain("a", "b", "c", "d", "e"),
      edge("c", "b"),
      edge("e", "d"),
      start("a"),
      output("e"),
    ]);
    const found = only(def, "cycle");
    expect(found.map((d) => d.node)).toEqual(["c->b", "e->d"]);
    expect(found[0]!.message).toBe('cycle: the edge "c->b" closes a cycle: "b" -> "c" -> "b"');
  });

  it("cycle and unreachable are independent: an unreachable cycle reports both", () => {
    const def = base();
    def.nodes.push(...definitionFromOps("o", [py("p"), py("q")]).nodes);
    def.edges.push({ source: "p", target: "q", scope: null, condition: null, site: null });
    def.edges.push({ source: "q", target: "p", scope: null, condition: null, site: null });
    expect(errorRules(def).sort()).toEqual(["cycle", "unreachable", "unreachable"]);
  });
});

describe("warnings (phase 4)", () => {
  it("loop_exit_all_conditional when every edge into a distinct exit is conditional", () => {
    const def = definitionFromOps("w", [
      loop(
        "L",
        [
          py("x"),
          py("y"),
          py("z"),
          edge("x", "y"),
          edge("x", "z", true),
          { op: "switch", src: "y", cases: ["z"], default: "q" },
          py("q"),
        ],
        "x",
        "z",
      ),
      start("L"),
      output("L"),
    ]);
    const found = findings(def);
    expect(found.map((f) => f.rule)).toEqual(["loop_exit_all_conditional"]);
    expect(found[0]!.d).toMatchObject({
      severity: "warning",
      code: "loop_exit_all_conditional",
      node: "z",
      stage: "graph",
    });
    expect(validateDefinition(def).definition).not.toBeNull();
  });

  it("no loop_exit_all_conditional when one edge into the exit is unconditional, or the exit is the entry", () => {
    const mixed = definitionFromOps("w", [
      loop("L", [py("x"), py("y"), py("z"), chain("x", "y"), edge("x", "z", true), edge("y", "z")], "x", "z"),
      start("L"),
      output("L"),
    ]);
    expect(findings(mixed)).toEqual([]);
    const single = definitionFromOps("w", [loop("L", [py("x")], "x", "x"), start("L"), output("L")]);
    expect(findings(single)).toEqual([]);
  });

  it("loop_exit_may_be_skipped when every path from entry to exit crosses a when edge", () => {
    const def = definitionFromOps("w", [
      loop("L", [py("x"), py("y"), py("z"), edge("x", "y", true), edge("y", "z")], "x", "z"),
      start("L"),
      output("L"),
    ]);
    const found = findings(def);
    expect(found.map((f) => f.rule)).toEqual(["loop_exit_may_be_skipped"]);
    expect(found[0]!.d).toMatchObject({ severity: "warning", node: "z" });
  });

  it("no loop_exit_may_be_skipped when switch branches meet again at the exit", () => {
    const def = definitionFromOps("w", [
      loop(
        "L",
        [
          py("x"),
          py("y"),
          py("z"),
          py("w"),
          { op: "switch", src: "x", cases: ["y"], default: "z" },
          edge("y", "w"),
          edge("z", "w"),
        ],
        "x",
        "w",
      ),
      start("L"),
      output("L"),
    ]);
    expect(findings(def)).toEqual([]);
  });

  it("warnings are not computed for a graph that has errors", () => {
    const def = definitionFromOps("w", [
      loop("L", [py("x"), py("y"), edge("x", "y", true)], "x", "y"),
      py("orphan"),
      start("L"),
      output("L"),
    ]);
    expect(findings(def).map((f) => f.rule)).toEqual(["unreachable"]);
  });
});

describe("positions", () => {
  it("places a diagnostic at the declaration with its columns and a note for build()", () => {
    const def = base();
    def.build_site = site(30, "/w/main.py");
    def.edges.push({ source: "a", target: "a", scope: null, condition: null, site: site(12) });
    const [d] = only(def, "self_edge");
    expect(d).toMatchObject({
      file: "/w/flow.py",
      line: 12,
      column: 5,
      end_line: 12,
      end_column: 9,
      notes: [{ message: "build() called here", file: "/w/main.py", line: 30 }],
    });
  });

  it("falls back to build() when sites were truncated, and to null when nothing is known", () => {
    const def = base();
    def.sites_truncated = true;
    def.build_site = site(30);
    def.edges.push({ source: "a", target: "a", scope: null, condition: null, site: null });
    expect(only(def, "self_edge")[0]).toMatchObject({ line: 30, notes: [] });
    def.build_site = null;
    expect(only(def, "self_edge")[0]).toMatchObject({ file: null, line: null, column: null, notes: [] });
  });

  it("quotes names so that control characters cannot break a report line", () => {
    const def = base();
    def.edges.push({ source: "a\nFAIL", target: "b", scope: null, condition: null, site: null });
    const [d] = only(def, "unknown_node");
    expect(d!.message).not.toContain("\n");
    expect(d!.message).toContain('"a\\nFAIL"');
  });
});

describe("checkDefinition", () => {
  it("names the rule behind each diagnostic", () => {
    const def = base();
    def.outputs = [];
    expect(checkDefinition(def).map((f) => f.rule)).toEqual(["no_outputs"]);
  });
});

describe("scale", () => {
  const chainOf = (count: number, scope: string | null = null): Definition => {
    const nodes: Definition["nodes"] = [];
    const edges: Edge[] = [];
    for (let i = 0; i < count; i++) {
      nodes.push({
        id: `n${i}`,
        scope,
        site: null,
        kind: "python",
        timeout: null,
        retry: null,
        is_async: false,
        takes_context: false,
      });
      if (i > 0) edges.push({ source: `n${i - 1}`, target: `n${i}`, scope, condition: null, site: null });
    }
    return {
      format: 1,
      title: "long",
      description: null,
      start: "n0",
      outputs: [`n${count - 1}`],
      nodes,
      edges,
      build_site: null,
      sites_truncated: true,
    };
  };

  it("validates a 100,000-node chain without overflowing the stack", () => {
    const def = chainOf(100_000);
    expect(validateDefinition(def).diagnostics).toEqual([]);
  });

  it("finds a 100,000-node cycle and a 100,000-node unreachable tail iteratively", () => {
    const looped = chainOf(100_000);
    looped.edges.push({ source: "n99999", target: "n0", scope: null, condition: null, site: null });
    const [d] = only(looped, "cycle");
    expect(d!.node).toBe("n99999->n0");
    expect(d!.message).toContain("… 99992 more");

    const cut = chainOf(100_000);
    cut.edges.splice(99_996, 1);
    expect(only(cut, "unreachable").map((d) => d.node)).toEqual(["n99997", "n99998", "n99999"]);
  });

  it("validates a 20,000-node chain inside a loop body", () => {
    const def = chainOf(20_000, "L");
    def.nodes.push({
      id: "L",
      scope: null,
      site: null,
      kind: "loop",
      entry: "n0",
      exit: "n19999",
      max_iterations: 2,
      on_exhausted: "fail",
    });
    def.start = "L";
    def.outputs = ["L"];
    expect(validateDefinition(def).diagnostics).toEqual([]);
  });
});
