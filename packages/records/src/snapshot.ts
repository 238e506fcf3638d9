import { copyFileSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { writeFileAtomic } from "./atomic";
import { storageFailed } from "./codes";

/**
 * What a run keeps of its workflow source: a path on disk (a `.py` file, or a workflow folder), or files in
 * memory (the exact bytes the engine loaded). Paths in `files` are relative, with `/`.
 */
export type SourceSnapshot =
  | { readonly path: string }
  | { readonly files: ReadonlyArray<{ readonly path: string; readonly content: string | Uint8Array }> };

/** Names left out of a folder snapshot (clarification 23): dot-names and bytecode caches. */
function skippedInSnapshot(name: string): boolean {
  return name.startsWith(".") || name === "__pycache__";
}

/**
 * Copies the source into `targetDir` (created here) and returns the relative paths written, sorted. A file
 * is copied under its own name; a folder is copied whole, except names starting with `.` and `__pycache__`
 * folders at any depth. Symbolic links to files are copied as the file; links to folders are not followed.
 */
export function writeSourceSnapshot(targetDir: string, source: SourceSnapshot): string[] {
  try {
    mkdirSync(targetDir, { recursive: true });
  } catch (cause) {
    throw storageFailed("the source snapshot folder", targetDir, cause);
  }
  const written: string[] = [];
  if ("files" in source) {
    for (const file of source.files) {
      const rel = file.path.split("/").filter((part) => part !== "" && part !== ".");
      if (rel.length === 0 || rel.some((part) => part === "..")) {
        throw storageFailed(
          "the source snapshot",
          join(targetDir, file.path),
          new Error("not a relative path"),
        );
      }
      const target = join(targetDir, ...rel);
      try {
        mkdirSync(dirname(target), { recursive: true });
      } catch (cause) {
        throw storageFailed("the source snapshot", target, cause);
      }
      writeFileAtomic(target, file.content, "the source snapshot");
      written.push(rel.join("/"));
    }
    return written.sort();
  }
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(source.path);
  } catch (cause) {
    throw storageFailed("the source snapshot", source.path, cause);
  }
  if (info.isDirectory()) {
    copyFolder(source.path, source.path, targetDir, written);
  } else {
    const name = basename(source.path);
    copyOne(source.path, join(targetDir, name));
    written.push(name);
  }
  return written.sort();
}

function copyFolder(root: string, dir: string, targetRoot: string, written: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (cause) {
    throw storageFailed("the source snapshot", dir, cause);
  }
  for (const name of names) {
    if (skippedInSnapshot(name)) continue;
    const path = join(dir, name);
    const rel = relative(root, path);
    const link = lstatSync(path);
    if (link.isDirectory()) {
      try {
        mkdirSync(join(targetRoot, rel), { recursive: true });
      } catch (cause) {
        throw storageFailed("the source snapshot", join(targetRoot, rel), cause);
      }
      copyFolder(root, path, targetRoot, written);
      continue;
    }
    let info: ReturnType<typeof statSync>;
    try {
      info = statSync(path);
    } catch {
      continue; // a dangling link: nothing to keep
    }
    if (!info.isFile()) continue;
    copyOne(path, join(targetRoot, rel));
    written.push(rel.split(sep).join("/"));
  }
}

function copyOne(from: string, to: string): void {
  try {
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  } catch (cause) {
    throw storageFailed("the source snapshot", to, cause);
  }
}
