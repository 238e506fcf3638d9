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

/**
 * Builds this package (and `@icode/workflow-errors`, which its bundle imports) when the bundle is missing or
 * older than the sources: `turbo run test` builds first, so this only works when vitest is started directly.
 */
export async function ensureBuilt(): Promise<void> {
  const errors = join(PACKAGE_DIR, "node_modules", "@icode", "workflow-errors", "dist", "index.js");
  if ((await mtime(errors)) === 0)
    await execa("tsup", [], { cwd: join(PACKAGE_DIR, "..", "errors"), preferLocal: true });
  if ((await mtime(ENTRY)) < (await newest(join(PACKAGE_DIR, "src")))) {
    await execa("tsup", [], { cwd: PACKAGE_DIR, preferLocal: true });
  }
}
