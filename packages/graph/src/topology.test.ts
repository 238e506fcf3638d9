import { describe, expect, it } from "vitest";
import { definitionFromOps } from "../test/ops";
import { edgeKey } from "./schema";
import { bodyOf, edgesFrom, edgesInto, indexDefinition, nodeNamed, nodeNumber, switchesOf } from "./topology";

const def = definitionFromOps("topology", [
  { op: "python", name: "a" },
  { op: "python", name: "b" },
  { op: "python", name: "c" },
  { op: "python", name: "d" },
  {
    op: "loop",
    name: "L",
    body: [
      { op: "python", name: "x" },
      { op: "python", name: "y" },
      { op: "edge", src: "x", dst: "y", when: true },
    ],
    entry: "x",
    exit: "y",
    max_iterations: 2,
    on_exhausted: "continue",
  },
  { op: "switch", src: "a", cases: ["b", "c"], default: "d" },
  { op: "edge", src: "a", dst: "L", when: true },
  { op: "join", sources: ["c", "b", "d"], dst: "L" },
  { op: "start", node: "a" },
  { op: "output", node: "L" },
]);

describe("indexDefinition", () => {
  const index = indexDefinition(def);
  const keys = (edges: readonly { source: string; target: string }[]) => edges.map(edgeKey);

  it("numbers the nodes in declaration order and records scopes, loops, joins and loop bodies", () => {
    expect(index.nodes.map((node) => node.id)).toEqual(["a", "b", "c", "d", "L", "x", "y", "join:L"]);
    expect(index.nodes).toBe(def.nodes);
    expect(new Map(index.numbers)).toEqual(new Map(index.nodes.map((node, v) => [node.id, v])));
    expect([...index.scopes]).toEqual([-1, -1, -1, -1, -1, 4, 4, -1]);
    expect(index.loops).toEqual([def.nodes[4]]);
    expect(index.joins).toEqual([def.nodes[7]]);
    expect(nodeNamed(index, "x")).toBe(def.nodes[5]);
    expect(nodeNamed(index, "nobody")).toBeUndefined();
    expect(nodeNumber(index, "nobody")).toBe(-1);
    expect(bodyOf(index, "L")).toEqual(["x", "y"]);
    expect(bodyOf(index, "a")).toEqual([]);
    expect(index.definition).toBe(def);
  });

  it("numbers the ends of every edge by position", () => {
    def.edges.forEach((edge, e) => {
      expect(index.nodes[index.edgeSources[e]!]!.id).toBe(edge.source);
      expect(index.nodes[index.edgeTargets[e]!]!.id).toBe(edge.target);
    });
  });

  it("is built once per Definition object", () => {
    expect(indexDefinition(def)).toBe(index);
    expect(indexDefinition(structuredClone(def))).not.toBe(index);
  });

  it("keeps outgoing and incoming edges per node in declaration order, sharing the Definition's objects", () => {
    expect(keys(edgesFrom(index, "a"))).toEqual(["a->b", "a->c", "a->d", "a->L"]);
    expect(keys(edgesInto(index, "join:L"))).toEqual(["c->join:L", "b->join:L", "d->join:L"]);
    expect(keys(edgesInto(index, "L"))).toEqual(["a->L", "join:L->L"]);
    expect(edgesFrom(index, "a")[0]).toBe(def.edges.find((e) => e.source === "a"));
    expect(edgesFrom(index, "y")).toEqual([]);
    expect(edgesFrom(index, "nobody")).toEqual([]);
  });

  it("groups a source's switch edges: cases in order, then the default", () => {
    const [group, ...more] = switchesOf(index, "a");
    expect(more).toEqual([]);
    expect(keys(group!.cases)).toEqual(["a->b", "a->c"]);
    expect(group!.default && edgeKey(group!.default)).toBe("a->d");
    expect(switchesOf(index, "x")).toEqual([]);
  });

  it("indexes an invalid Definition without throwing: first declaration wins, undeclared ends are left out", () => {
    const broken = structuredClone(def);
    broken.nodes.push({ ...broken.nodes[0]!, site: null });
    broken.edges.push({
      source: "ghost",
      target: "a",
      scope: "nowhere",
      condition: { kind: "case", index: 0 },
      site: null,
    });
    const bad = indexDefinition(broken);
    expect(nodeNamed(bad, "a")).toBe(broken.nodes[0]);
    expect(bad.numbers.size).toBe(def.nodes.length);
    expect(bodyOf(bad, "L")).toEqual(["x", "y"]);
    expect(bad.edgeSources.at(-1)).toBe(-1);
    expect(keys(edgesFrom(bad, "ghost"))).toEqual([]);
    expect(keys(edgesInto(bad, "a"))).toEqual([]);
    expect(switchesOf(bad, "ghost")).toEqual([
      { source: "ghost", cases: [broken.edges.at(-1)], default: null },
    ]);
  });
});
