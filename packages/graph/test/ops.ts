import { z } from "zod";
import type { Definition, Edge, Site, WorkflowNode } from "../src/schema";

/**
 * Test-only: the builder operations of `fixtures/graphs/cases.json` and an interpreter that turns them into a
 * Definition exactly as `Workflow.definition.to_manifest()` emits one, WITHOUT checking anything, so the
 * validator can be shown every mistake. The Python builder's tests replay the same operations through
 * the real `WorkflowBuilder`.
 */

const LoopOpSchema = z.strictObject({
  op: z.literal("loop"),
  name: z.string(),
  /** Operations of the loop body, declared with the body's scope. */
  get body() {
    return z.array(OpSchema);
  },
  entry: z.string(),
  exit: z.string(),
  max_iterations: z.number().int().min(1),
  on_exhausted: z.enum(["continue", "fail"]),
});

/** One builder call. `when` and `combine` say whether a condition or combine function is passed. */
export const OpSchema = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("python"), name: z.string() }),
  z.strictObject({ op: z.literal("agent"), name: z.string(), profile: z.string() }),
  z.strictObject({ op: z.literal("edge"), src: z.string(), dst: z.string(), when: z.boolean().optional() }),
  z.strictObject({ op: z.literal("chain"), nodes: z.array(z.string()).min(2) }),
  z.strictObject({
    op: z.literal("switch"),
    src: z.string(),
    cases: z.array(z.string()),
    default: z.string(),
  }),
  z.strictObject({
    op: z.literal("join"),
    sources: z.array(z.string()),
    dst: z.string(),
    combine: z.boolean().optional(),
  }),
  LoopOpSchema,
  z.strictObject({ op: z.literal("start"), node: z.string() }),
  z.strictObject({ op: z.literal("output"), node: z.string() }),
]);
export type Op = z.infer<typeof OpSchema>;

export const CaseSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9_]+$/),
  ops: z.array(OpSchema),
  expect: z.string(),
});
export type GraphCase = z.infer<typeof CaseSchema>;

/** The file every site of a case points into; op N (counting body ops, depth first) is on line N. */
export function caseFile(name: string): string {
  return `/cases/${name}.py`;
}

/** Interprets builder operations into a Definition, as `to_manifest()` would emit it, without validating. */
export function definitionFromOps(name: string, ops: readonly Op[]): Definition {
  const file = caseFile(name);
  let line = 0;
  const site = (): Site => ({ file, line: ++line, column: null, end_line: null, end_column: null });
  const definition: Definition = {
    format: 1,
    title: name,
    description: null,
    start: "",
    outputs: [],
    nodes: [],
    edges: [],
    build_site: null,
    sites_truncated: false,
  };
  const node = (fields: WorkflowNode) => definition.nodes.push(fields);
  const edge = (fields: Edge) => definition.edges.push(fields);

  const run = (list: readonly Op[], scope: string | null) => {
    for (const op of list) {
      const at = site();
      switch (op.op) {
        case "python":
          node({
            id: op.name,
            scope,
            site: at,
            kind: "python",
            timeout: 300,
            retry: null,
            is_async: false,
            takes_context: false,
          });
          break;
        case "agent":
          node({
            id: op.name,
            scope,
            site: at,
            kind: "agent",
            profile: op.profile,
            model: null,
            instructions_suffix: null,
            timeout: null,
            retry: null,
          });
          break;
        case "edge":
          edge({
            source: op.src,
            target: op.dst,
            scope,
            condition: op.when ? { kind: "when" } : null,
            site: at,
          });
          break;
        case "chain":
          for (let i = 1; i < op.nodes.length; i++) {
            edge({ source: op.nodes[i - 1]!, target: op.nodes[i]!, scope, condition: null, site: at });
          }
          break;
        case "switch":
          op.cases.forEach((target, index) => {
            edge({ source: op.src, target, scope, condition: { kind: "case", index }, site: at });
          });
          edge({ source: op.src, target: op.default, scope, condition: { kind: "default" }, site: at });
          break;
        case "join": {
          const id = `join:${op.dst}`;
          node({
            id,
            scope,
            site: at,
            kind: "join",
            sources: op.sources,
            target: op.dst,
            has_combine: op.combine ?? false,
          });
          for (const source of op.sources) edge({ source, target: id, scope, condition: null, site: at });
          edge({ source: id, target: op.dst, scope, condition: null, site: at });
          break;
        }
        case "loop":
          node({
            id: op.name,
            scope,
            site: at,
            kind: "loop",
            entry: op.entry,
            exit: op.exit,
            max_iterations: op.max_iterations,
            on_exhausted: op.on_exhausted,
          });
          run(op.body, op.name);
          break;
        case "start":
          definition.start = op.node;
          break;
        case "output":
          definition.outputs.push(op.node);
          break;
      }
    }
  };
  run(ops, null);
  definition.build_site = site();
  return definition;
}
