import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

export const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
export const ENTRY = join(PACKAGE_DIR, "dist", "index.js");

async function newest(dir: string): Promise<number> {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, await newest(path));
    else if (!entry.name.endsWith(".test.ts")) latest = Math.max(latest, (await stat(path)).mtimeMs);
  }
  return latest;
}

const mtime = (path: string) =>
  stat(path).then(
    (s) => s.mtimeMs,
    () => 0,
  );

/** The folders of the workspace packages the bundle imports at run time, in build order. */
const RUNTIME_DEPENDENCIES = ["errors", "graph", "scheduler"] as const;

/**
 * Builds this package (and the workspace packages its bundle imports) when a bundle is missing or this one
 * is older than the sources: `turbo run test` builds first, so this only works when vitest is started directly.
 */
export async function ensureBuilt(): Promise<void> {
  for (const folder of RUNTIME_DEPENDENCIES) {
    const dir = join(PACKAGE_DIR, "..", folder);
    if ((await mtime(join(dir, "dist", "index.js"))) === 0)
      await execa("tsup", [], { cwd: dir, preferLocal: true });
  }
  if ((await mtime(ENTRY)) < (await newest(join(PACKAGE_DIR, "src")))) {
    await execa("tsup", [], { cwd: PACKAGE_DIR, preferLocal: true });
  }
}
