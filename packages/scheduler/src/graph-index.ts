import {
  type Definition,
  type EdgeCondition,
  indexDefinition,
  type WorkflowNode,
} from "@icode/workflow-graph";
import { SchedulerError } from "./errors";
import type { ConditionBatch } from "./executor";

/**
 * The scheduler's own index of a Definition: integer-indexed nodes with their incoming edges in merge order
 * and outgoing edges with prebuilt condition batches, so that a run never scans the graph. Built in
 * O(nodes + edges) once per Definition object (cached; Definitions are treated as immutable) on top of
 * `indexDefinition` from `@icode/workflow-graph`, whose node numbers and edge ends it reuses: when the
 * Definition went through `validateDefinition`, that index is already built. Structural
 * problems that would make a run hang or misbehave (unknown references, duplicate IDs or edges, cycles,
 * nodes no edge can reach) throw `SchedulerError("definition_invalid")`. The full validation with
 * diagnostics belongs to `@icode/workflow-graph`; this is the scheduler's guard.
 */

export interface IndexedEdge {
  /** `source->target`, the name of the edge in condition batches and decisions. */
  readonly key: string;
  readonly src: number;
  readonly dst: number;
  readonly condition: EdgeCondition;
  readonly conditional: boolean;
  /** Position among the destination's incoming edges (the default-merge order). */
  readonly pos: number;
}

export interface IndexedNode {
  readonly index: number;
  readonly id: string;
  readonly node: WorkflowNode;
  /** Index of the loop whose body holds the node, or -1 at the top level. */
  readonly loop: number;
  /** In merge order: incoming-edge declaration order, or `sources` order for a join. */
  readonly incoming: readonly IndexedEdge[];
  readonly outgoing: readonly IndexedEdge[];
  /** The conditional outgoing edges as one batch, or `null` when every outgoing edge is unconditional. */
  readonly conditions: ConditionBatch | null;
  readonly conditionKeys: ReadonlySet<string> | null;
  /** Loop nodes: indexes of the body nodes, and of the entry and exit (else empty / -1). */
  readonly body: readonly number[];
  readonly entry: number;
  readonly exit: number;
  readonly isOutput: boolean;
  /** Total attempts per round and backoff for python/agent nodes (defaults applied). */
  readonly maxAttempts: number;
  readonly backoffMs: number;
  /** Per-attempt limit in milliseconds, or `null`. */
  readonly timeoutMs: number | null;
}

export interface GraphIndex {
  readonly nodes: readonly IndexedNode[];
  /** Node by ID: a view of the graph index's own ID map, as a second map per node would cost as much again. */
  readonly byId: Pick<ReadonlyMap<string, IndexedNode>, "get">;
  readonly start: number;
  /** In `output()` declaration order. */
  readonly outputs: readonly number[];
  readonly topLevelCount: number;
  readonly edgeCount: number;
}

/** `Retry` defaults: a Python node runs once; an agent node gets three attempts with zero backoff. */
export const DEFAULT_PYTHON_RETRY = { max_attempts: 1, backoff: 0 } as const;
export const DEFAULT_AGENT_RETRY = { max_attempts: 3, backoff: 0 } as const;
const ONCE = { max_attempts: 1, backoff: 0 } as const;
const NO_BODY: readonly number[] = Object.freeze([]);

/** The mutable shape used while building; published as the readonly `IndexedNode`. */
type Building = { -readonly [K in keyof IndexedNode]: IndexedNode[K] } & {
  incoming: IndexedEdge[];
  outgoing: IndexedEdge[];
  body: number[];
};

function invalid(message: string): never {
  throw new SchedulerError("definition_invalid", message, {
    hint: "validate the Definition with @icode/workflow-graph before running it",
  });
}

const cache = new WeakMap<Definition, GraphIndex>();

export function buildGraphIndex(definition: Definition): GraphIndex {
  let index = cache.get(definition);
  if (index === undefined) {
    index = build(definition);
    cache.set(definition, index);
  }
  return index;
}

function build(definition: Definition): GraphIndex {
  const graph = indexDefinition(definition);
  if (graph.numbers.size !== definition.nodes.length) {
    const seen = new Set<string>();
    for (const { id } of definition.nodes) {
      if (seen.has(id)) invalid(`node "${id}" is declared twice; node IDs must be unique`);
      seen.add(id);
    }
  }
  // Loops over every node or edge are indexed: this runs once per run, mostly before V8 has optimized it,
  // and there `for…of` allocates an iterator result per item (hundreds of bytes per node in all).
  // A node's index is its number in `graph`: its position in `definition.nodes`.
  const nodes: Building[] = [];
  for (let v = 0; v < definition.nodes.length; v++) {
    const node = definition.nodes[v]!;
    const retry =
      node.kind === "python"
        ? (node.retry ?? DEFAULT_PYTHON_RETRY)
        : node.kind === "agent"
          ? (node.retry ?? DEFAULT_AGENT_RETRY)
          : ONCE;
    const timeout = node.kind === "python" || node.kind === "agent" ? node.timeout : null;
    const entry: Building = {
      index: nodes.length,
      id: node.id,
      node,
      loop: -1,
      incoming: [],
      outgoing: [],
      conditions: null,
      conditionKeys: null,
      body: node.kind === "loop" ? [] : (NO_BODY as number[]),
      entry: -1,
      exit: -1,
      isOutput: false,
      maxAttempts: retry.max_attempts,
      backoffMs: retry.backoff * 1000,
      timeoutMs: timeout === null ? null : timeout * 1000,
    };
    nodes.push(entry);
  }
  const byId = {
    get(id: string): Building | undefined {
      const found = graph.numbers.get(id);
      return found === undefined ? undefined : nodes[found];
    },
  };
  const find = (id: string, what: () => string): Building =>
    byId.get(id) ?? invalid(`${what()} names unknown node "${id}"`);

  // Scopes: a body node belongs to a top-level loop; loops do not nest.
  for (let v = 0; v < nodes.length; v++) {
    const n = nodes[v]!;
    const scope = n.node.scope;
    if (scope === null) continue;
    const owner = graph.scopes[n.index]!;
    if (owner < 0) invalid(`the scope of node "${n.id}" names unknown node "${scope}"`);
    const loop = nodes[owner]!;
    if (loop.node.kind !== "loop") invalid(`node "${n.id}" is scoped to "${loop.id}", which is not a loop`);
    if (n.node.kind === "loop")
      invalid(`loop "${n.id}" is inside loop "${loop.id}"; nested loops are not supported`);
    n.loop = loop.index;
    loop.body.push(n.index);
  }
  for (const loop of graph.loops) {
    const n = byId.get(loop.id)!;
    const entry = find(loop.entry, () => `the entry of loop "${n.id}"`);
    const exit = find(loop.exit, () => `the exit of loop "${n.id}"`);
    if (entry.loop !== n.index || exit.loop !== n.index) {
      invalid(`loop "${n.id}": its entry "${entry.id}" and exit "${exit.id}" must belong to its body`);
    }
    n.entry = entry.index;
    n.exit = exit.index;
  }

  // Edges. Edges into a join come from its `sources`, in that order (synthesized when the Definition does
  // not list them); the join's edge to its target likewise.
  let edgeCount = 0;
  const add = (src: Building, dst: Building, condition: EdgeCondition): void => {
    const key = `${src.id}->${dst.id}`;
    if (src === dst) invalid(`edge ${key} connects a node to itself`);
    if (src.loop !== dst.loop) invalid(`edge ${key} crosses a loop body boundary`);
    const edge: IndexedEdge = {
      key,
      src: src.index,
      dst: dst.index,
      condition,
      conditional: condition !== null,
      pos: dst.incoming.length,
    };
    dst.incoming = appended(dst.incoming, edge);
    src.outgoing = appended(src.outgoing, edge);
    edgeCount++;
  };
  for (let at = 0; at < definition.edges.length; at++) {
    const e = definition.edges[at]!;
    const src = graph.edgeSources[at]!;
    const dst = graph.edgeTargets[at]!;
    if (src < 0) invalid(`edge ${e.source}->${e.target} names unknown node "${e.source}"`);
    if (dst < 0) invalid(`edge ${e.source}->${e.target} names unknown node "${e.target}"`);
    if (nodes[dst]!.node.kind !== "join") add(nodes[src]!, nodes[dst]!, e.condition);
  }
  // joinEdgeFrom[v]: the position of the declared edge from node v into the join at hand, or -1.
  const joinEdgeFrom = new Int32Array(nodes.length).fill(-1);
  const into = graph.incoming;
  for (const join of graph.joins) {
    const j = byId.get(join.id)!;
    for (let at = into.start[j.index]!; at < into.start[j.index + 1]!; at++) {
      const src = graph.edgeSources[into.edges[at]!]!;
      if (joinEdgeFrom[src] !== -1) invalid(`edge ${nodes[src]!.id}->${j.id} is declared twice`);
      joinEdgeFrom[src] = into.edges[at]!;
    }
    for (let i = 0; i < join.sources.length; i++) {
      const sourceId = join.sources[i]!;
      const source = find(sourceId, () => `join "${j.id}"`);
      const declared = joinEdgeFrom[source.index]!;
      joinEdgeFrom[source.index] = -1;
      add(source, j, declared === -1 ? null : definition.edges[declared]!.condition);
    }
    for (let at = into.start[j.index]!; at < into.start[j.index + 1]!; at++) {
      const src = graph.edgeSources[into.edges[at]!]!;
      if (joinEdgeFrom[src] === -1) continue;
      invalid(
        `edge ${nodes[src]!.id}->${j.id} enters a join, but its source is not one of the join's sources`,
      );
    }
    const target = find(join.target, () => `join "${j.id}"`);
    if (!j.outgoing.some((e) => e.dst === target.index)) add(j, target, null);
  }

  // Duplicate edges, with a stamp per destination instead of hashing every edge key.
  const stamp = new Int32Array(nodes.length).fill(-1);
  for (let v = 0; v < nodes.length; v++) {
    const outgoing = nodes[v]!.outgoing;
    for (let i = 0; i < outgoing.length; i++) {
      const edge = outgoing[i]!;
      if (stamp[edge.dst] === v) invalid(`edge ${edge.key} is declared twice`);
      stamp[edge.dst] = v;
    }
  }

  // Condition batches, from each source's conditional edges.
  for (let v = 0; v < nodes.length; v++) {
    const n = nodes[v]!;
    let when: string[] | null = null;
    let cases: string[] | null = null;
    let fallback: string | null = null;
    for (let i = 0; i < n.outgoing.length; i++) {
      const edge = n.outgoing[i]!;
      const condition = edge.condition;
      if (condition === null) continue;
      if (condition.kind === "when") {
        when ??= [];
        when.push(edge.key);
      } else if (condition.kind === "default") {
        if (fallback !== null) invalid(`node "${n.id}" has two switch defaults`);
        fallback = edge.key;
      } else {
        cases ??= [];
        if (cases[condition.index] !== undefined) {
          invalid(`node "${n.id}" has two switch cases at index ${condition.index}`);
        }
        cases[condition.index] = edge.key;
      }
    }
    if (when === null && cases === null && fallback === null) continue;
    const caseKeys = cases ?? [];
    for (let i = 0; i < caseKeys.length; i++) {
      if (caseKeys[i] === undefined)
        invalid(`node "${n.id}": switch case indexes must run 0, 1, 2, … without gaps`);
    }
    if (cases !== null && fallback === null) invalid(`node "${n.id}": a switch needs its default edge`);
    n.conditions = {
      when: when ?? [],
      switch: fallback === null ? null : { cases: caseKeys, default: fallback },
    };
    n.conditionKeys = new Set([...(when ?? []), ...caseKeys, ...(fallback === null ? [] : [fallback])]);
  }

  const start = find(definition.start, () => "the start");
  if (start.loop !== -1) {
    invalid(`the start "${start.id}" is inside loop "${nodes[start.loop]!.id}"; it must be a top-level node`);
  }
  const outputs: number[] = [];
  for (let i = 0; i < definition.outputs.length; i++) {
    const id = definition.outputs[i]!;
    const out = find(id, () => "an output");
    if (out.loop !== -1) invalid(`output "${id}" is inside a loop body; outputs must be top-level nodes`);
    if (out.isOutput) invalid(`output "${id}" is declared twice`);
    out.isOutput = true;
    outputs.push(out.index);
  }

  // Every node but the start and the loop entries needs an incoming edge, those need none, and there is no
  // cycle: then every node is reached and every activation eventually has all its inputs decided (Kahn).
  const indegree = new Int32Array(nodes.length);
  const ready: number[] = [];
  let topLevelCount = 0;
  for (let v = 0; v < nodes.length; v++) {
    const n = nodes[v]!;
    if (n.loop === -1) topLevelCount++;
    const isRoot = n === start || (n.loop !== -1 && nodes[n.loop]!.entry === n.index);
    if (isRoot && n.incoming.length > 0) {
      invalid(`node "${n.id}" starts ${n === start ? "the workflow" : "a loop body"} but has incoming edges`);
    }
    if (!isRoot && n.incoming.length === 0)
      invalid(`node "${n.id}" has no incoming edge, so no run can reach it`);
    indegree[n.index] = n.incoming.length;
    if (isRoot) ready.push(n.index);
  }
  let visited = 0;
  while (ready.length > 0) {
    const outgoing = nodes[ready.pop()!]!.outgoing;
    visited++;
    for (let k = 0; k < outgoing.length; k++) {
      const dst = outgoing[k]!.dst;
      const left = indegree[dst]! - 1;
      indegree[dst] = left;
      if (left === 0) ready.push(dst);
    }
  }
  if (visited !== nodes.length) {
    const stuck = nodes.filter((n) => indegree[n.index]! > 0).map((n) => n.id);
    invalid(`the edges form a cycle through ${stuck.slice(0, 5).join(", ")}; use loop() to repeat nodes`);
  }

  return { nodes, byId, start: start.index, outputs, topLevelCount, edgeCount };
}

/**
 * `list` with `item` at its end. Most nodes have one incoming and one outgoing edge: an array literal holds
 * exactly its elements, where the first `push` onto an empty array reserves room for 16, which on a large
 * graph is most of what this index allocates.
 */
function appended<T>(list: T[], item: T): T[] {
  if (list.length === 0) return [item];
  list.push(item);
  return list;
}
