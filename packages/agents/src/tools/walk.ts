import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { isInside } from "./workspace";

/** Folders never searched: Git's own data. */
export const SKIPPED_FOLDERS: readonly string[] = [".git"];
/** Entries visited by one search at most, so a huge tree cannot stall a tool call. */
export const WALK_MAX_ENTRIES = 200_000;

export interface WalkedFile {
  /** The file's resolved path. */
  real: string;
  /** Its path relative to the walked folder, with `/`. */
  rel: string;
}

/**
 * Visits the files below `dir` (resolved, inside `workspaceReal`) in name order, folder by folder, until
 * `visit` returns false. `.git` folders are skipped; a link to a file is followed only when its target is
 * inside the working directory; links to folders are not followed (no cycles, no escapes). Returns whether
 * the walk stopped at the entry limit.
 */
export async function walkFiles(
  dir: string,
  workspaceReal: string,
  visit: (file: WalkedFile) => boolean | Promise<boolean>,
  signal?: AbortSignal,
): Promise<{ limited: boolean }> {
  let seen = 0;
  const walk = async (folder: string, prefix: string): Promise<boolean> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return true;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (signal?.aborted) return false;
      if (++seen > WALK_MAX_ENTRIES) return false;
      const path = join(folder, entry.name);
      const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        if (SKIPPED_FOLDERS.includes(entry.name)) continue;
        if (!(await walk(path, rel))) return false;
      } else if (entry.isFile()) {
        if (!(await visit({ real: path, rel }))) return false;
      } else if (entry.isSymbolicLink()) {
        try {
          const target = await realpath(path);
          if (!isInside(workspaceReal, target) || !(await stat(target)).isFile()) continue;
          if (!(await visit({ real: target, rel }))) return false;
        } catch {}
      }
    }
    return true;
  };
  await walk(dir, "");
  return { limited: seen > WALK_MAX_ENTRIES };
}
