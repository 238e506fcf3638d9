import { isAbsolute, relative, resolve, sep } from "node:path";

/** True when `path` is `base` or inside it, compared lexically (links are not resolved). */
export function isInside(base: string, path: string): boolean {
  const rel = relative(resolve(base), resolve(path));
  return rel === "" || !(rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
}
