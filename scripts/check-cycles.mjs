#!/usr/bin/env node
// Import cycles, at two levels: between the workspace's packages (their `@icode/*` dependencies) and between
// the modules of each package's `src/` (relative imports, type-only ones included: a cycle of types is still a
// cycle a reader has to hold in their head). Prints each cycle and exits 1 when there is one; part of
// `pnpm lint`. Pure functions are exported for scripts/check-cycles.test.mjs.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** `import … from "x"`, `export … from "x"`, `import("x")`, `import "x"` — the specifiers of a source file. */
export function importsOf(source) {
  const specifiers = [];
  const pattern =
    /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,]+?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;
  for (const match of source.matchAll(pattern)) specifiers.push(match[1] ?? match[2]);
  return specifiers;
}

/** The cycles of a directed graph (`Map<node, node[]>`), each once, as node lists starting at their least node. */
export function findCycles(graph) {
  const cycles = [];
  const seen = new Set();
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  let counter = 0;
  // Tarjan's strongly connected components; a component of more than one node (or a self-loop) has cycles.
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = component.length === 1 && (graph.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) {
        const cycle = shortestCycle(graph, new Set(component));
        const key = [...cycle].sort().join("\u0000");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      }
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** One shortest cycle through the least node of a strongly connected component (breadth-first). */
function shortestCycle(graph, members) {
  const start = [...members].sort()[0];
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const cycle = [node];
        for (let at = previous.get(node); at !== null; at = previous.get(at)) cycle.unshift(at);
        return cycle;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/** The TypeScript file a relative specifier names, or `null` (`./x` → `./x.ts`, `./x/index.ts`, `./x.ts` as is). */
function resolveRelative(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  const js = base.replace(/\.m?js$/, ".ts");
  return js !== base && existsSync(js) ? js : null;
}

function sourceFiles(dir) {
  const files = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) files.push(path);
  }
  return files;
}

/** The module graph of one package's `src/`, and the `@icode/*` packages it imports. */
export function packageGraph(srcDir) {
  const graph = new Map();
  for (const file of sourceFiles(srcDir)) {
    const edges = [];
    for (const specifier of importsOf(readFileSync(file, "utf8"))) {
      if (!specifier.startsWith(".")) continue;
      const target = resolveRelative(file, specifier);
      if (target !== null) edges.push(target);
    }
    graph.set(file, edges);
  }
  return graph;
}

function workspacePackages(root) {
  const packages = [];
  for (const group of ["packages", "apps", "internal"]) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const manifest = join(dir, name, "package.json");
      if (existsSync(manifest))
        packages.push({ dir: join(dir, name), manifest: JSON.parse(readFileSync(manifest, "utf8")) });
    }
  }
  return packages;
}

/** Every cycle of the workspace: between packages, and inside each package's `src/`. */
export function workspaceCycles(root) {
  const packages = workspacePackages(root);
  const names = new Set(packages.map((p) => p.manifest.name));
  const between = new Map(
    packages.map((p) => [
      p.manifest.name,
      Object.keys({ ...p.manifest.dependencies, ...p.manifest.peerDependencies }).filter((d) => names.has(d)),
    ]),
  );
  const cycles = findCycles(between).map((cycle) => ({ where: "packages", cycle }));
  for (const p of packages) {
    const src = join(p.dir, "src");
    if (!existsSync(src)) continue;
    for (const cycle of findCycles(packageGraph(src))) {
      cycles.push({ where: p.manifest.name, cycle: cycle.map((file) => relative(root, file)) });
    }
  }
  return cycles;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const cycles = workspaceCycles(root);
  for (const { where, cycle } of cycles) {
    console.error(`import cycle in ${where}: ${[...cycle, cycle[0]].join(" → ")}`);
  }
  if (cycles.length > 0) {
    console.error(`${cycles.length} import cycle(s); move the shared part into a module both can import.`);
    process.exit(1);
  }
  console.log("no import cycles");
}
