import type { PipelineDefinition, PipelineNode } from "../definition";
import type { JsonSource } from "../json-source";
import { DEFAULT_OUTPUT_SCHEMA, declaredFields, type OutputSchema } from "../output-schema";
import { scanTemplate } from "../template";
import type { Found, PipelineReportBuilder } from "./report";
import { closest } from "./suggest";

/**
 * The `graph` stage: unique node IDs; dependencies that exist, are not the node itself and form no cycle;
 * `reuse_session_of` naming a transitive ancestor, and no session that two nodes could drive at once; and
 * template variables that name direct dependencies and fields their handoff schema declares (warnings: the
 * reference leaves such variables as written).
 */
export function graphStage(
  report: PipelineReportBuilder,
  source: JsonSource,
  definition: PipelineDefinition,
): boolean {
  const found: Found[] = [];
  const { nodes } = definition;
  const index = new Map<string, number>();
  nodes.forEach((node, i) => {
    const first = index.get(node.id);
    if (first === undefined) {
      index.set(node.id, i);
      return;
    }
    found.push(
      report.at(["nodes", i, "id"], {
        code: "pipeline_duplicate_node_id",
        node: node.id,
        message: `node ID "${node.id}" is used by nodes[${first}] and nodes[${i}]; node IDs must be unique`,
        notes: [
          {
            message: `first used by nodes[${first}]`,
            file: report.file,
            line: report.lineOf(["nodes", first, "id"]),
          },
        ],
        hint: "rename one of them (and the depends_on, reuse_session_of and {{upstream.…}} that mean it)",
      }),
    );
  });

  // Edges that resolve: node i depends on node j.
  const deps: number[][] = nodes.map(() => []);
  nodes.forEach((node, i) => {
    const listed = new Set<string>();
    node.depends_on.forEach((dep, k) => {
      const at = ["nodes", i, "depends_on", k];
      if (listed.has(dep)) {
        found.push(
          report.at(at, {
            code: "pipeline_duplicate_dependency",
            severity: "warning",
            node: node.id,
            message: `node "${node.id}" lists "${dep}" in depends_on twice`,
            hint: "remove the repeated entry",
          }),
        );
        return;
      }
      listed.add(dep);
      const j = index.get(dep);
      if (dep === node.id) {
        found.push(
          report.at(at, {
            code: "pipeline_self_dependency",
            node: node.id,
            message: `node "${node.id}" depends on itself`,
            hint: `remove "${dep}" from its depends_on`,
          }),
        );
      } else if (j === undefined) {
        const suggestion = closest(dep, index.keys());
        found.push(
          report.at(at, {
            code: "pipeline_unknown_dependency",
            node: node.id,
            message: `node "${node.id}" depends on "${dep}", which is not a node of this pipeline`,
            hint:
              suggestion === null
                ? `the node IDs are: ${[...index.keys()].join(", ")}`
                : `did you mean "${suggestion}"?`,
          }),
        );
      } else deps[i]!.push(j);
    });
  });

  for (const cycle of findCycles(deps)) {
    const names = cycle.map((i) => nodes[i]!.id);
    const edge = (k: number) => {
      const [from, to] = [cycle[k]!, cycle[(k + 1) % cycle.length]!];
      return ["nodes", from, "depends_on", nodes[from]!.depends_on.indexOf(nodes[to]!.id)];
    };
    found.push(
      report.at(edge(0), {
        code: "pipeline_dependency_cycle",
        node: names[0]!,
        message: `dependency cycle: ${[...names, names[0]].join(" → ")} (each node depends on the next); none of them could ever start`,
        notes: cycle.slice(1).map((_, k) => ({
          message: `"${names[k + 1]}" depends on "${names[(k + 2) % names.length]}"`,
          file: report.file,
          line: report.lineOf(edge(k + 1)),
        })),
        hint: "remove one of these dependencies",
      }),
    );
  }

  const ancestors = ancestorSets(deps);
  sessionChecks(report, found, nodes, index, ancestors);
  templateChecks(report, source, found, nodes, index);
  return report.stage("graph", found);
}

/** Every strongly connected component with a cycle (self-loops are reported apart), as one cycle through it. */
function findCycles(deps: readonly number[][]): number[][] {
  const n = deps.length;
  const order = new Array<number>(n).fill(-1);
  const low = new Array<number>(n).fill(0);
  const onStack = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  const components: number[][] = [];
  let counter = 0;
  // Iterative Tarjan: deep pipelines must not exhaust the call stack.
  for (let start = 0; start < n; start++) {
    if (order[start] !== -1) continue;
    const work: Array<[number, number]> = [[start, 0]];
    order[start] = low[start] = counter++;
    stack.push(start);
    onStack[start] = true;
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, k] = top;
      const edges = deps[v]!;
      if (k < edges.length) {
        top[1]++;
        const w = edges[k]!;
        if (order[w] === -1) {
          order[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = true;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v]!, order[w]!);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === order[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = false;
          component.push(w);
        } while (w !== v);
        if (component.length > 1) components.push(component);
      }
    }
  }
  return components.map((component) => cycleThrough(deps, new Set(component))).sort((a, b) => a[0]! - b[0]!);
}

/** A shortest cycle inside a component, starting at its first node in definition order. */
function cycleThrough(deps: readonly number[][], members: Set<number>): number[] {
  const start = Math.min(...members);
  const previous = new Map<number, number>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q]!;
    for (const w of deps[v]!) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return path;
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** For each node, the set of its transitive ancestors (what it depends on, directly or not). */
function ancestorSets(deps: readonly number[][]): Set<number>[] {
  return deps.map((_, i) => {
    const seen = new Set<number>();
    const todo = [...deps[i]!];
    while (todo.length > 0) {
      const j = todo.pop()!;
      if (seen.has(j)) continue;
      seen.add(j);
      todo.push(...deps[j]!);
    }
    return seen;
  });
}

function sessionChecks(
  report: PipelineReportBuilder,
  found: Found[],
  nodes: readonly PipelineNode[],
  index: ReadonlyMap<string, number>,
  ancestors: readonly Set<number>[],
): void {
  // The node whose session each node continues, once `reuse_session_of` is valid.
  const continues = new Map<number, number>();
  nodes.forEach((node, i) => {
    const target = node.reuse_session_of;
    if (target === null) return;
    const at = ["nodes", i, "reuse_session_of"];
    const j = index.get(target);
    const fail = (message: string, hint: string) =>
      found.push(
        report.at(at, { code: "pipeline_reuse_session_not_ancestor", node: node.id, message, hint }),
      );
    if (target === node.id) {
      fail(`node "${node.id}" reuses its own session`, "name an ancestor node, or remove reuse_session_of");
    } else if (j === undefined) {
      const suggestion = closest(target, index.keys());
      fail(
        `node "${node.id}" reuses the session of "${target}", which is not a node of this pipeline`,
        suggestion === null ? "name an ancestor node" : `did you mean "${suggestion}"?`,
      );
    } else if (!ancestors[i]!.has(j)) {
      fail(
        `node "${node.id}" reuses the session of "${target}", which is not one of its ancestors: "${target}" may not have run yet, or may still be running`,
        `make "${node.id}" depend on "${target}" (directly or through another node)`,
      );
    } else {
      continues.set(i, j);
      const other = nodes[j]!;
      const differs = [
        other.runtime !== node.runtime ? `runtime ("${other.runtime}" vs "${node.runtime}")` : null,
        other.profile_id !== node.profile_id
          ? `profile_id (${JSON.stringify(other.profile_id)} vs ${JSON.stringify(node.profile_id)})`
          : null,
      ].filter((d) => d !== null);
      if (differs.length > 0) {
        found.push(
          report.at(at, {
            code: "pipeline_reuse_session_mismatch",
            severity: "warning",
            node: node.id,
            message: `node "${node.id}" continues the session of "${target}" but has a different ${differs.join(" and ")}; the session keeps the agent it was started with`,
            hint: `give "${node.id}" the same runtime and profile_id as "${target}"`,
          }),
        );
      }
    }
  });
  // Nodes that continue one session must not be able to run at once: neither may be the other's ancestor-free peer.
  const root = (i: number): number => {
    const seen = new Set<number>();
    let r = i;
    while (continues.has(r) && !seen.has(r)) {
      seen.add(r);
      r = continues.get(r)!;
    }
    return r;
  };
  const bySession = new Map<number, number[]>();
  for (const i of continues.keys()) {
    const r = root(i);
    bySession.set(r, [...(bySession.get(r) ?? []), i]);
  }
  for (const [r, members] of bySession) {
    members.sort((a, b) => a - b);
    for (let a = 0; a < members.length; a++) {
      for (let b = a + 1; b < members.length; b++) {
        const [u, v] = [members[a]!, members[b]!];
        if (ancestors[u]!.has(v) || ancestors[v]!.has(u)) continue;
        found.push(
          report.at(["nodes", v, "reuse_session_of"], {
            code: "pipeline_session_shared",
            node: nodes[v]!.id,
            message: `nodes "${nodes[u]!.id}" and "${nodes[v]!.id}" both continue the session of "${nodes[r]!.id}" and may run at the same time; an agent session works on one prompt at a time`,
            hint: `make "${nodes[v]!.id}" depend on "${nodes[u]!.id}" (or the other way round), or start a new session in one of them`,
          }),
        );
      }
    }
  }
}

function templateChecks(
  report: PipelineReportBuilder,
  source: JsonSource,
  found: Found[],
  nodes: readonly PipelineNode[],
  index: ReadonlyMap<string, number>,
): void {
  nodes.forEach((node, i) => {
    const path = ["nodes", i, "prompt_template"];
    const located = source.locate(path);
    const at = (offset: number, length: number, fields: Parameters<PipelineReportBuilder["at"]>[1]) => {
      if (located === null || !located.exact) return report.at(path, fields);
      const start = source.stringOffset(located.node, offset);
      return report.atRange(path, start, source.stringOffset(located.node, offset + length) - start, fields);
    };
    const direct = new Set(node.depends_on);
    for (const variable of scanTemplate(node.prompt_template)) {
      const warn = (code: Found["code"], message: string, hint: string) =>
        found.push(
          at(variable.offset, variable.length, { code, severity: "warning", node: node.id, message, hint }),
        );
      if (variable.kind === "unknown") {
        warn(
          "pipeline_template_unknown_variable",
          `node "${node.id}": ${variable.raw} is not a template variable; it is left as written`,
          "the variables are {{task}}, {{upstream.<id>.summary}}, {{upstream.<id>.json}}, {{upstream.<id>.<field>}} and {{upstream_summaries}}",
        );
      } else if (variable.kind === "upstream") {
        const j = index.get(variable.node);
        if (j === undefined) {
          const suggestion = closest(variable.node, index.keys());
          warn(
            "pipeline_template_unknown_node",
            `node "${node.id}": ${variable.raw} names "${variable.node}", which is not a node of this pipeline; it is left as written`,
            suggestion === null ? "name a direct dependency" : `did you mean "${suggestion}"?`,
          );
        } else if (!direct.has(variable.node)) {
          warn(
            "pipeline_template_not_direct",
            `node "${node.id}": ${variable.raw} names "${variable.node}", which is not a direct dependency; only direct dependencies are rendered, so it is left as written`,
            `add "${variable.node}" to the depends_on of "${node.id}"`,
          );
        } else if (variable.field !== "json") {
          const upstream = nodes[j]!;
          const schema = (upstream.output_schema ?? DEFAULT_OUTPUT_SCHEMA) as OutputSchema;
          const fields = declaredFields(schema);
          if (!fields.has(variable.field)) {
            warn(
              "pipeline_template_field_undeclared",
              `node "${node.id}": ${variable.raw} reads the field "${variable.field}", which the output_schema of "${upstream.id}" does not declare; it renders as "" when the handoff lacks it`,
              fields.size === 0
                ? `declare "${variable.field}" in the output_schema of "${upstream.id}"`
                : `"${upstream.id}" declares: ${[...fields].join(", ")}; or declare "${variable.field}" in its output_schema`,
            );
          }
        }
      }
    }
  });
}
