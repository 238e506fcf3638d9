import type { Dirent } from "node:fs";
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";

/**
 * The error a damaged compiled file gives when Python imports it: importlib checks a `.pyc` file's header
 * (a short header just means "recompile"), but not that the code after it is whole, and `marshal` fails on
 * a file cut short, which a full disk can leave behind (Python writes the cache without syncing it).
 */
const DAMAGED = /^(EOFError: marshal data too short|ValueError: bad marshal data\b.*)$/m;

/** The line of `stderr` (a worker that could not start) saying a compiled file was damaged, or `null`. */
export function damagedBytecode(stderr: string): string | null {
  return DAMAGED.exec(stderr)?.[1] ?? null;
}

/**
 * Removes every compiled file (`*.pyc`) under `cacheDir`, the engine's `PYTHONPYCACHEPREFIX`, and returns
 * how many. Only `.pyc` files, and links are not followed, so a folder passed by mistake loses nothing else.
 * Python writes them again on the next start.
 */
export async function dropCompiledFiles(cacheDir: string): Promise<number> {
  let removed = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // gone, or not ours to read
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && entry.name.endsWith(".pyc")) {
        try {
          await unlink(path);
          removed++;
        } catch {}
      }
    }
  };
  await walk(cacheDir);
  return removed;
}
