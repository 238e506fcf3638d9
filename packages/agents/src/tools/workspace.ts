import { existsSync, lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A path a file tool may use: inside the working directory, also after following symbolic links. */
export type WorkspacePath =
  | {
      ok: true;
      /** The path with every existing link resolved: what the tool reads or writes. */
      real: string;
      /** The path relative to the working directory, with `/`, for messages (`.` for the folder itself). */
      display: string;
    }
  | { ok: false; error: string };

/** True when `path` is `base` or inside it, compared lexically. */
export function isInside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === "" || !(rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}

function toDisplay(root: string, path: string): string {
  const rel = relative(root, path);
  return rel === "" ? "." : rel.split(sep).join("/");
}

function outside(input: string, root: string): WorkspacePath {
  return {
    ok: false,
    error:
      `${input} is outside the working directory ${root}; file tools only reach files inside it. ` +
      `Use a path relative to the working directory.`,
  };
}

/**
 * Resolves a path the model gave against the working directory and refuses it when it leaves that
 * directory, lexically (`../x`, `/etc/passwd`) or through a symbolic link anywhere along it (a link inside
 * the folder pointing out of it). A path that does not exist yet is checked through its nearest existing
 * parent, so a tool may create it; a link whose target does not exist is refused, since writing through
 * it would create a file we cannot check.
 */
export function resolveWorkspacePath(cwd: string, input: string): WorkspacePath {
  if (input.trim() === "") return { ok: false, error: "the path is empty; give a file path" };
  if (input.includes("\0")) return { ok: false, error: "the path contains a NUL character" };
  const root = resolve(cwd);
  const absolute = resolve(root, input);
  if (!isInside(root, absolute)) return outside(input, root);
  let rootReal: string;
  try {
    rootReal = realpathSync(root);
  } catch {
    return { ok: false, error: `the working directory ${root} does not exist` };
  }
  let existing = absolute;
  const missing: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(existing);
      if (!isInside(rootReal, real)) return outside(input, root);
      return { ok: true, real: join(real, ...missing), display: toDisplay(root, absolute) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        return { ok: false, error: `cannot resolve ${input}: ${(error as Error).message}` };
      }
      if (isLink(existing)) {
        return {
          ok: false,
          error: `${toDisplay(root, existing)} is a symbolic link to something that does not exist; it is not followed`,
        };
      }
    }
    missing.unshift(basename(existing));
    const parent = dirname(existing);
    if (parent === existing) return outside(input, root);
    existing = parent;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The folder holding `.git` at or above `dir` (links resolved), or null when it is in no Git repository. */
export function gitRepositoryRoot(dir: string): string | null {
  let start: string;
  try {
    start = realpathSync(dir);
  } catch {
    return null;
  }
  for (let d = start; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return d;
    if (dirname(d) === d) return null;
  }
}

/**
 * Whether a write to `real` (a resolved path) lands inside the working directory's Git repository, for the
 * approval rule that lets such writes run directly. Writes into the `.git` folder itself never count.
 */
export function insideGitRepository(cwd: string, real: string): boolean {
  const root = gitRepositoryRoot(cwd);
  if (root === null || !isInside(root, real)) return false;
  return !relative(root, real).split(sep).includes(".git");
}
