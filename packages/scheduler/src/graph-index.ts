import type { Definition, Edge, EdgeCondition, WorkflowNode } from "@icode/workflow-graph";
import { SchedulerError } from "./errors";
import type { ConditionBatch } from "./executor";

/**
 * The scheduler's own index of a Definition: integer-indexed nodes with their incoming edges in merge order
 * and outgoing edges with prebuilt condition batches, so that a run never scans the graph. Built in
 * O(nodes + edges) once per Definition object (cached; Definitions are treated as immutable). Structural
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
  readonly byId: ReadonlyMap<string, IndexedNode>;
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
  const byId = new Map<string, Building>();
  const nodes: Building[] = [];
  for (const node of definition.nodes) {
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
    byId.set(node.id, entry);
    if (byId.size !== nodes.length) invalid(`node "${node.id}" is declared twice; node IDs must be unique`);
  }
  const find = (id: string, what: () => string): Building => {
    const found = byId.get(id);
    return found === undefined ? invalid(`${what()} names unknown node "${id}"`) : found;
  };

  // Scopes: a body node belongs to a top-level loop; loops do not nest.
  for (const n of nodes) {
    if (n.node.scope === null) continue;
    const loop = find(n.node.scope, () => `the scope of node "${n.id}"`);
    if (loop.node.kind !== "loop") invalid(`node "${n.id}" is scoped to "${loop.id}", which is not a loop`);
    if (n.node.kind === "loop")
      invalid(`loop "${n.id}" is inside loop "${loop.id}"; nested loops are not supported`);
    n.loop = loop.index;
    loop.body.push(n.index);
  }
  for (const n of nodes) {
    if (n.node.kind !== "loop") continue;
    const entry = find(n.node.entry, () => `the entry of loop "${n.id}"`);
    const exit = find(n.node.exit, () => `the exit of loop "${n.id}"`);
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
    dst.incoming.push(edge);
    src.outgoing.push(edge);
    edgeCount++;
  };
  const joinEdges: Edge[] = [];
  for (const e of definition.edges) {
    const src = find(e.source, () => `edge ${e.source}->${e.target}`);
    const dst = find(e.target, () => `edge ${e.source}->${e.target}`);
    if (dst.node.kind === "join") joinEdges.push(e);
    else add(src, dst, e.condition);
  }
  const joinConditions = new Map<string, EdgeCondition>();
  for (const e of joinEdges) {
    const key = `${e.source}->${e.target}`;
    if (joinConditions.has(key)) invalid(`edge ${key} is declared twice`);
    joinConditions.set(key, e.condition);
  }
  for (const j of nodes) {
    if (j.node.kind !== "join") continue;
    for (const sourceId of j.node.sources) {
      const key = `${sourceId}->${j.id}`;
      const condition = joinConditions.get(key) ?? null;
      joinConditions.delete(key);
      add(
        find(sourceId, () => `join "${j.id}"`),
        j,
        condition,
      );
    }
    const target = find(j.node.target, () => `join "${j.id}"`);
    if (!j.outgoing.some((e) => e.dst === target.index)) add(j, target, null);
  }
  for (const key of joinConditions.keys()) {
    invalid(`edge ${key} enters a join, but its source is not one of the join's sources`);
  }

  // Duplicate edges, with a stamp per destination instead of hashing every edge key.
  const stamp = new Int32Array(nodes.length).fill(-1);
  for (const n of nodes) {
    for (const edge of n.outgoing) {
      if (stamp[edge.dst] === n.index) invalid(`edge ${edge.key} is declared twice`);
      stamp[edge.dst] = n.index;
    }
  }

  // Condition batches, from each source's conditional edges.
  for (const n of nodes) {
    let when: string[] | null = null;
    let cases: string[] | null = null;
    let fallback: string | null = null;
    for (const edge of n.outgoing) {
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
  for (const id of definition.outputs) {
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
  for (const n of nodes) {
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
    const i = ready.pop()!;
    visited++;
    for (const edge of nodes[i]!.outgoing) {
      const left = indegree[edge.dst]! - 1;
      indegree[edge.dst] = left;
      if (left === 0) ready.push(edge.dst);
    }
  }
  if (visited !== nodes.length) {
    const stuck = nodes.filter((n) => indegree[n.index]! > 0).map((n) => n.id);
    invalid(`the edges form a cycle through ${stuck.slice(0, 5).join(", ")}; use loop() to repeat nodes`);
  }

  return { nodes, byId, start: start.index, outputs, topLevelCount, edgeCount };
}
