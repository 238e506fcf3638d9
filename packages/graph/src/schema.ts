import { z } from "zod";

/**
 * The workflow Definition: the built graph as the Python builder emits it (`Workflow.definition.to_manifest()`),
 * as the worker sends it, as the scheduler executes it and as run records store it. Field names are snake_case
 * because the same JSON is produced by Python and written to disk. One schema, every type inferred from it.
 */

export const DEFINITION_FORMAT = 1 as const;

/**
 * `z.object`, with the parsed output's keys in code point order (zod writes them in shape order; the shapes
 * below stay in reading order). A parsed Definition then already has canonical JSON's key order, so run
 * records and digests hand it to the native `JSON.stringify` instead of rewriting every node, which costs
 * tens of milliseconds on a 10,000-node workflow. The keys are ASCII, where `<` is code point order.
 */
function sortedObject<Shape extends z.ZodRawShape>(shape: Shape): z.ZodObject<Shape> {
  const entries = Object.entries(shape).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return z.object(Object.fromEntries(entries) as Shape);
}

/** Where a declaration was made in the author's code. Columns are 1-based and only known on Python 3.11+. */
export const SiteSchema = sortedObject({
  file: z.string(),
  line: z.number().int().min(1),
  column: z.number().int().min(1).nullable(),
  end_line: z.number().int().min(1).nullable(),
  end_column: z.number().int().min(1).nullable(),
});
export type Site = z.infer<typeof SiteSchema>;

export const RetrySchema = sortedObject({
  max_attempts: z.number().int().min(1),
  backoff: z.number().min(0).finite(),
});
export type Retry = z.infer<typeof RetrySchema>;

/** Seconds per attempt; `null` means no deadline. */
export const TimeoutSchema = z.number().positive().finite().nullable();

const nodeBase = {
  id: z.string().min(1),
  /** `null` at the top level, else the ID of the loop whose body holds the node. */
  scope: z.string().nullable(),
  site: SiteSchema.nullable(),
};

export const PythonNodeSchema = sortedObject({
  ...nodeBase,
  kind: z.literal("python"),
  timeout: TimeoutSchema,
  /** `null`: the node runs once. */
  retry: RetrySchema.nullable(),
  is_async: z.boolean(),
  /** The function takes a second `NodeContext` parameter. */
  takes_context: z.boolean(),
});

export const AgentNodeSchema = sortedObject({
  ...nodeBase,
  kind: z.literal("agent"),
  profile: z.string(),
  model: z.string().nullable(),
  instructions_suffix: z.string().nullable(),
  timeout: TimeoutSchema,
  /** `null`: the agent default, at most three attempts with zero backoff. */
  retry: RetrySchema.nullable(),
});

export const LoopNodeSchema = sortedObject({
  ...nodeBase,
  kind: z.literal("loop"),
  entry: z.string(),
  exit: z.string(),
  max_iterations: z.number().int().min(1),
  on_exhausted: z.enum(["continue", "fail"]),
});

export const JoinNodeSchema = sortedObject({
  ...nodeBase,
  kind: z.literal("join"),
  /** Source node IDs in `join()` declaration order. */
  sources: z.array(z.string()).min(1),
  /** The destination; the join node's ID is `join:<target>`. */
  target: z.string(),
  has_combine: z.boolean(),
});

export const NodeSchema = z.discriminatedUnion("kind", [
  PythonNodeSchema,
  AgentNodeSchema,
  LoopNodeSchema,
  JoinNodeSchema,
]);
export type WorkflowNode = z.infer<typeof NodeSchema>;
export type PythonNode = z.infer<typeof PythonNodeSchema>;
export type AgentNode = z.infer<typeof AgentNodeSchema>;
export type LoopNode = z.infer<typeof LoopNodeSchema>;
export type JoinNode = z.infer<typeof JoinNodeSchema>;
export type NodeKind = WorkflowNode["kind"];

/**
 * How an edge decides whether it passes its source's output:
 * `null` always; `when` an `edge(..., when=)` condition; `case` the `index`-th `switch()` case; `default` the
 * switch default. A source's switch edges appear together, cases in order, then the default.
 */
export const EdgeConditionSchema = z
  .discriminatedUnion("kind", [
    sortedObject({ kind: z.literal("when") }),
    sortedObject({ kind: z.literal("case"), index: z.number().int().min(0) }),
    sortedObject({ kind: z.literal("default") }),
  ])
  .nullable();
export type EdgeCondition = z.infer<typeof EdgeConditionSchema>;

export const EdgeSchema = sortedObject({
  source: z.string(),
  target: z.string(),
  scope: z.string().nullable(),
  condition: EdgeConditionSchema,
  site: SiteSchema.nullable(),
});
export type Edge = z.infer<typeof EdgeSchema>;

export const DefinitionSchema = sortedObject({
  format: z.literal(DEFINITION_FORMAT),
  title: z.string(),
  description: z.string().nullable(),
  start: z.string(),
  /** Output node IDs in `output()` declaration order. */
  outputs: z.array(z.string()),
  /** Nodes in declaration order (a join node is declared by its `join()` call). */
  nodes: z.array(NodeSchema),
  /** Edges in declaration order; incoming-edge order decides the default merge order. */
  edges: z.array(EdgeSchema),
  /** Where `build()` was called. */
  build_site: SiteSchema.nullable(),
  /** Too many declarations to record every site: some `site` fields are `null`. */
  sites_truncated: z.boolean(),
});
export type Definition = z.infer<typeof DefinitionSchema>;

/** The key that names an edge in diagnostics and in the worker's callable registry: `source->target`. */
export function edgeKey(edge: Pick<Edge, "source" | "target">): string {
  return `${edge.source}->${edge.target}`;
}

/** The ID of the join node that `join(sources, dst)` creates. */
export function joinNodeId(target: string): string {
  return `join:${target}`;
}
