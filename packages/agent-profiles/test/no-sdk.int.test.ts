import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { tempTree } from "./fixtures";

// The package must load no model SDK and no protocol SDK: other packages (the CLI listing, a web front end)
// import it without paying for them, and the agent loop brings its own.
const FORBIDDEN =
  /(^|\/)node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(ai|@ai-sdk\/[^/]+|@agentclientprotocol\/[^/]+|@modelcontextprotocol\/[^/]+)\//u;
const pkg = fileURLToPath(new URL("..", import.meta.url));
const entry = join(pkg, "dist", "index.js");

async function newestSource(dir: string): Promise<number> {
  let newest = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, await newestSource(path));
    else if (!e.name.endsWith(".test.ts")) newest = Math.max(newest, (await stat(path)).mtimeMs);
  }
  return newest;
}

beforeAll(async () => {
  // Build this package and its dependencies when a bundle is missing or older than the sources
  // (`turbo run test` builds first, so this only runs when vitest is started directly).
  const mtime = (path: string) =>
    stat(path).then(
      (s) => s.mtimeMs,
      () => 0,
    );
  const errors = join(pkg, "node_modules", "@icode", "workflow-errors", "dist", "index.js");
  if ((await mtime(entry)) < (await newestSource(join(pkg, "src"))) || (await mtime(errors)) === 0) {
    for (const dir of [join(pkg, "..", "errors"), pkg])
      await execa("tsup", [], { cwd: dir, preferLocal: true });
  }
}, 180_000);

describe("no model or protocol SDK", () => {
  it("depends only on zod, yaml and @icode/workflow-errors", async () => {
    const manifest = JSON.parse(await readFile(join(pkg, "package.json"), "utf8"));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["@icode/workflow-errors", "yaml", "zod"]);
    expect(manifest.peerDependencies).toBeUndefined();
    expect(manifest.optionalDependencies).toBeUndefined();
  });

  it("the built bundle imports only those packages and Node built-ins", async () => {
    const code = await readFile(entry, "utf8");
    const specifiers = [
      ...code.matchAll(
        /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gu,
      ),
    ].map((m) => m[1] ?? m[2]);
    const builtin = (s: string) => s.startsWith("node:") || builtinModules.includes(s);
    const packages = [
      ...new Set(specifiers.filter((s): s is string => s !== undefined && !builtin(s))),
    ].sort();
    expect(packages).toEqual(["@icode/workflow-errors", "yaml", "zod"]);
  });

  it("importing the entry in a fresh process loads no module of ai, @ai-sdk, @agentclientprotocol or @modelcontextprotocol", async () => {
    const dir = await tempTree({});
    // A resolve hook records every module URL the import loads; asking the hook thread for its list after
    // the import has finished returns all of them.
    await writeFile(
      join(dir, "hook.mjs"),
      [
        "const urls = [];",
        "export function initialize({ port }) { port.on('message', () => port.postMessage(urls)); }",
        "export async function resolve(specifier, context, next) { const r = await next(specifier, context); urls.push(r.url); return r; }",
      ].join("\n"),
    );
    await writeFile(
      join(dir, "main.mjs"),
      [
        "import { register } from 'node:module';",
        "import { MessageChannel } from 'node:worker_threads';",
        "const { port1, port2 } = new MessageChannel();",
        "register(new URL('./hook.mjs', import.meta.url), { data: { port: port2 }, transferList: [port2] });",
        "const api = await import(process.argv[2]);",
        "const urls = await new Promise((done) => { port1.once('message', done); port1.postMessage('list'); });",
        "process.stdout.write(JSON.stringify({ urls, exports: Object.keys(api).length }));",
        "process.exit(0);",
      ].join("\n"),
    );
    const { stdout } = await execa(process.execPath, [join(dir, "main.mjs"), entry], { cwd: pkg });
    const { urls, exports } = JSON.parse(stdout) as { urls: string[]; exports: number };
    expect(exports).toBeGreaterThan(20);
    expect(urls.some((u) => u.endsWith("/dist/index.js"))).toBe(true);
    expect(urls.some((u) => /\/node_modules\/.*\/zod\//u.test(u))).toBe(true);
    expect(urls.some((u) => /\/node_modules\/.*\/yaml\//u.test(u))).toBe(true);
    expect(urls.filter((u) => FORBIDDEN.test(new URL(u).pathname))).toEqual([]);
    expect(FORBIDDEN.test("/r/node_modules/.pnpm/ai@5.0.0/node_modules/ai/dist/index.mjs")).toBe(true);
    expect(FORBIDDEN.test("/r/node_modules/@modelcontextprotocol/sdk/dist/client.js")).toBe(true);
  });
});
