import type { Definition, Edge, WorkflowNode } from "./schema";

/** One `switch()` call as it appears in a Definition: its case edges in index order, then its default. */
export interface SwitchGroup {
  readonly source: string;
  /** Case edges in declaration order (for a valid Definition, `cases[i].condition.index === i`). */
  readonly cases: readonly Edge[];
  /** `null` only in an invalid Definition whose last switch group has no default edge. */
  readonly default: Edge | null;
}

/**
 * A precomputed view of a Definition, built once in O(nodes + edges) and shared by the validator and the
 * scheduler. Every map is keyed by node ID. Edge objects are the Definition's own objects, in declaration order.
 */
export interface GraphIndex {
  readonly definition: Definition;
  /** Node by ID. When an ID is declared twice the first declaration wins (the validator reports the rest). */
  readonly nodes: ReadonlyMap<string, WorkflowNode>;
  /** Outgoing edges per node in declaration order; every declared node has an entry, possibly empty. */
  readonly outgoing: ReadonlyMap<string, readonly Edge[]>;
  /** Incoming edges per node in declaration order (the default merge order); every declared node has an entry. */
  readonly incoming: ReadonlyMap<string, readonly Edge[]>;
  /** Loop ID → IDs of the nodes whose `scope` is that loop, in declaration order; every loop has an entry. */
  readonly body: ReadonlyMap<string, readonly string[]>;
  /** IDs of the nodes with `scope: null`, in declaration order. */
  readonly topLevel: readonly string[];
  /** Source node ID → its switch groups in declaration order (at most one in a valid Definition). */
  readonly switches: ReadonlyMap<string, readonly SwitchGroup[]>;
}

const NO_EDGES: readonly Edge[] = [];
const NO_IDS: readonly string[] = [];
const NO_SWITCHES: readonly SwitchGroup[] = [];

/** Builds the {@link GraphIndex} of a Definition. Works on invalid Definitions too (unknown IDs get entries). */
export function indexDefinition(definition: Definition): GraphIndex {
  const nodes = new Map<string, WorkflowNode>();
  const outgoing = new Map<string, Edge[]>();
  const incoming = new Map<string, Edge[]>();
  const body = new Map<string, string[]>();
  const topLevel: string[] = [];

  for (const node of definition.nodes) {
    if (nodes.has(node.id)) continue;
    nodes.set(node.id, node);
    outgoing.set(node.id, []);
    incoming.set(node.id, []);
    if (node.kind === "loop" && !body.has(node.id)) body.set(node.id, []);
  }
  for (const node of nodes.values()) {
    if (node.scope === null) {
      topLevel.push(node.id);
    } else {
      listIn(body, node.scope).push(node.id);
    }
  }

  const switches = new Map<string, SwitchGroup[]>();
  const open = new Map<string, { cases: Edge[] }>();
  for (const edge of definition.edges) {
    listIn(outgoing, edge.source).push(edge);
    listIn(incoming, edge.target).push(edge);
    const condition = edge.condition;
    if (condition === null || condition.kind === "when") continue;
    let group = open.get(edge.source);
    if (group === undefined) {
      group = { cases: [] };
      open.set(edge.source, group);
    }
    if (condition.kind === "case") {
      group.cases.push(edge);
    } else {
      listIn(switches, edge.source).push({ source: edge.source, cases: group.cases, default: edge });
      open.delete(edge.source);
    }
  }
  for (const [source, group] of open) {
    listIn(switches, source).push({ source, cases: group.cases, default: null });
  }

  return { definition, nodes, outgoing, incoming, body, topLevel, switches };
}

/** Outgoing edges of `id` in declaration order (empty for an unknown ID). */
export function edgesFrom(index: GraphIndex, id: string): readonly Edge[] {
  return index.outgoing.get(id) ?? NO_EDGES;
}

/** Incoming edges of `id` in declaration order (empty for an unknown ID). */
export function edgesInto(index: GraphIndex, id: string): readonly Edge[] {
  return index.incoming.get(id) ?? NO_EDGES;
}

/** IDs of the nodes in the body of loop `id` (empty for an unknown ID). */
export function bodyOf(index: GraphIndex, id: string): readonly string[] {
  return index.body.get(id) ?? NO_IDS;
}

/** The switch groups whose source is `id` (empty when it has no switch). */
export function switchesOf(index: GraphIndex, id: string): readonly SwitchGroup[] {
  return index.switches.get(id) ?? NO_SWITCHES;
}

function listIn<V>(map: Map<string, V[]>, key: string): V[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}
