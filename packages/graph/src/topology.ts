import type { Definition, Edge, JoinNode, LoopNode, WorkflowNode } from "./schema";

/** One `switch()` call as it appears in a Definition: its case edges in index order, then its default. */
export interface SwitchGroup {
  readonly source: string;
  /** Case edges in declaration order (for a valid Definition, `cases[i].condition.index === i`). */
  readonly cases: readonly Edge[];
  /** `null` only in an invalid Definition whose last switch group has no default edge. */
  readonly default: Edge | null;
}

/**
 * Edges grouped by node, in compressed form: the edges of node `v` are the edge positions (indexes into
 * `definition.edges`) `edges[start[v]]` up to, not including, `edges[start[v + 1]]`, in declaration order.
 */
export interface Adjacency {
  /** One entry per node number, plus one. */
  readonly start: Int32Array;
  readonly edges: Int32Array;
}

/**
 * A precomputed view of a Definition, shared by the validator and the scheduler: `validateDefinition`
 * builds it and `startRun` reuses it (see {@link indexDefinition}). A node's number is its position in
 * `definition.nodes` and an edge's its position in `definition.edges`, so that checks and the scheduler walk
 * typed arrays instead of hashing IDs and allocating a list per node: both run on every workflow run, on
 * graphs of tens of thousands of nodes.
 */
export interface GraphIndex {
  readonly definition: Definition;
  /** Node number → node: `definition.nodes`. */
  readonly nodes: readonly WorkflowNode[];
  /**
   * Node ID → the number of its first declaration (the validator reports the others). Has fewer entries
   * than there are nodes exactly when some ID is declared twice.
   */
  readonly numbers: ReadonlyMap<string, number>;
  /** Node number → the number of the node its `scope` names; -1 for `scope: null` or an undeclared ID. */
  readonly scopes: Int32Array;
  /** The loop nodes in declaration order, so that what concerns loops need not scan every node. */
  readonly loops: readonly LoopNode[];
  /** The join nodes in declaration order, so that what concerns joins need not scan every node. */
  readonly joins: readonly JoinNode[];
  /** Edge position → the number of its source node; -1 when the source is not declared. */
  readonly edgeSources: Int32Array;
  /** Edge position → the number of its target node; -1 when the target is not declared. */
  readonly edgeTargets: Int32Array;
  /** Outgoing edges per node number. Edges with an undeclared end are left out. */
  readonly outgoing: Adjacency;
  /** Incoming edges per node number (the default merge order). Edges with an undeclared end are left out. */
  readonly incoming: Adjacency;
  /** Source node ID → its switch groups in declaration order (at most one in a valid Definition). */
  readonly switches: ReadonlyMap<string, readonly SwitchGroup[]>;
}

const NO_SWITCHES: readonly SwitchGroup[] = [];

// Definitions are treated as immutable once indexed (the scheduler has always cached on the same terms):
// the validator's index of a Definition is the one the scheduler runs on, not rebuilt for every run.
const built = new WeakMap<Definition, GraphIndex>();

/**
 * The {@link GraphIndex} of a Definition, built in O(nodes + edges) on first use and cached per Definition
 * object, which must not be changed afterwards. Works on invalid Definitions too.
 */
export function indexDefinition(definition: Definition): GraphIndex {
  let index = built.get(definition);
  if (index === undefined) {
    index = build(definition);
    built.set(definition, index);
  }
  return index;
}

function build(definition: Definition): GraphIndex {
  const nodes = definition.nodes;
  const numbers = new Map<string, number>();
  // Backwards, so that the first declaration of an ID is the one that stays.
  for (let v = nodes.length - 1; v >= 0; v--) numbers.set(nodes[v]!.id, v);

  const count = nodes.length;
  const scopes = new Int32Array(count);
  const loops: LoopNode[] = [];
  const joins: JoinNode[] = [];
  for (let v = 0; v < count; v++) {
    const node = nodes[v]!;
    scopes[v] = node.scope === null ? -1 : (numbers.get(node.scope) ?? -1);
    if (node.kind === "loop") loops.push(node);
    else if (node.kind === "join") joins.push(node);
  }

  const edges = definition.edges;
  const edgeSources = new Int32Array(edges.length);
  const edgeTargets = new Int32Array(edges.length);
  for (let e = 0; e < edges.length; e++) {
    const edge = edges[e]!;
    edgeSources[e] = numbers.get(edge.source) ?? -1;
    edgeTargets[e] = numbers.get(edge.target) ?? -1;
  }

  return {
    definition,
    nodes,
    numbers,
    scopes,
    loops,
    joins,
    edgeSources,
    edgeTargets,
    outgoing: adjacency(count, edgeSources, edgeTargets),
    incoming: adjacency(count, edgeTargets, edgeSources),
    switches: switchGroups(edges),
  };
}

/**
 * Groups edge positions by node `key[e]`, leaving out edges with an undeclared end (-1 in `key` or
 * `other`). A counting sort: declaration order is kept within each node, with no list allocated per node.
 */
function adjacency(count: number, key: Int32Array, other: Int32Array): Adjacency {
  const start = new Int32Array(count + 1);
  for (let e = 0; e < key.length; e++) {
    if (key[e]! >= 0 && other[e]! >= 0) start[key[e]! + 1]!++;
  }
  for (let v = 0; v < count; v++) start[v + 1]! += start[v]!;
  const edges = new Int32Array(start[count]!);
  const next = start.slice(0, count);
  for (let e = 0; e < key.length; e++) {
    if (key[e]! >= 0 && other[e]! >= 0) edges[next[key[e]!]!++] = e;
  }
  return { start, edges };
}

function switchGroups(edges: readonly Edge[]): Map<string, SwitchGroup[]> {
  const switches = new Map<string, SwitchGroup[]>();
  const open = new Map<string, { cases: Edge[] }>();
  // Indexed, like every loop over all nodes or edges here: it runs once per run, before V8 has optimized
  // it, where `for…of` allocates an iterator result per item.
  for (let e = 0; e < edges.length; e++) {
    const edge = edges[e]!;
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
  return switches;
}

/** The number of the node named `id`, or -1 when no node has that name. */
export function nodeNumber(index: GraphIndex, id: string): number {
  return index.numbers.get(id) ?? -1;
}

/** The (first) node named `id`, or `undefined`. */
export function nodeNamed(index: GraphIndex, id: string): WorkflowNode | undefined {
  const v = index.numbers.get(id);
  return v === undefined ? undefined : index.nodes[v];
}

/** The edges `adjacency` holds for node number `v`, as Edge objects in declaration order. */
function edgesOf(index: GraphIndex, adjacency: Adjacency, v: number): Edge[] {
  const found: Edge[] = [];
  if (v < 0) return found;
  for (let at = adjacency.start[v]!; at < adjacency.start[v + 1]!; at++) {
    found.push(index.definition.edges[adjacency.edges[at]!]!);
  }
  return found;
}

/** Outgoing edges of `id` in declaration order (empty for an unknown ID). Allocates: not for hot loops. */
export function edgesFrom(index: GraphIndex, id: string): Edge[] {
  return edgesOf(index, index.outgoing, nodeNumber(index, id));
}

/** Incoming edges of `id` in declaration order (empty for an unknown ID). Allocates: not for hot loops. */
export function edgesInto(index: GraphIndex, id: string): Edge[] {
  return edgesOf(index, index.incoming, nodeNumber(index, id));
}

/** IDs of the nodes whose scope is `id`, in declaration order (empty for an unknown ID). O(nodes). */
export function bodyOf(index: GraphIndex, id: string): string[] {
  const loop = nodeNumber(index, id);
  const body: string[] = [];
  if (loop < 0) return body;
  index.scopes.forEach((scope, v) => {
    const { id } = index.nodes[v]!;
    if (scope === loop && index.numbers.get(id) === v) body.push(id);
  });
  return body;
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
