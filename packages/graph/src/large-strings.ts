/**
 * Large strings inside JSON values: finding them, and moving them out of a value and back in. A value may
 * carry strings of up to 4,194,304 characters; writing one into every message or record line that holds the
 * value costs a JSON encoding each time. The worker protocol sends each large string once and names it by
 * reference afterwards (`@icode/python-bridge`), and the run records store each once in a file of its own
 * (`@icode/workflow-records`). Both cut them out of a value and put them back with these helpers.
 */

/** Strings at least this long count as large. */
export const LARGE_STRING_CHARS = 65_536;

export type PathStep = string | number;

/** A large string found in a value, and where: keys and indices from the value's root. */
export interface LargeString {
  path: PathStep[];
  text: string;
}

type WellFormed = string & { isWellFormed(): boolean };

/**
 * The large strings in `root` (depth first, in key order), with their paths; only under the given `within`
 * paths when given. Strings with lone surrogates are left out: they have no exact UTF-8 form, so they stay in
 * the JSON, which escapes them.
 */
export function findLargeStrings(
  root: unknown,
  within: readonly (readonly PathStep[])[] = [[]],
): LargeString[] {
  const found: LargeString[] = [];
  for (const start of within) {
    let value: unknown = root;
    for (const step of start) {
      value =
        typeof value === "object" && value !== null ? (value as Record<PathStep, unknown>)[step] : undefined;
    }
    if (value !== undefined) collect(value, [...start], found);
  }
  return found;
}

function isLargeOrContainer(value: unknown): boolean {
  return typeof value === "object"
    ? value !== null
    : typeof value === "string" && value.length >= LARGE_STRING_CHARS;
}

function collect(value: unknown, path: PathStep[], found: LargeString[]): void {
  if (typeof value === "string") {
    if (value.length >= LARGE_STRING_CHARS && (value as WellFormed).isWellFormed()) {
      found.push({ path: [...path], text: value });
    }
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (!isLargeOrContainer(item)) continue; // the common leaves, without a call
      path.push(i);
      collect(item, path, found);
      path.pop();
    }
    return;
  }
  for (const key of Object.keys(value)) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (!isLargeOrContainer(item)) continue;
    path.push(key);
    collect(item, path, found);
    path.pop();
  }
}

/**
 * A copy of `root` with `""` at each path, copying only the objects and arrays on the way: the caller's
 * value is never changed, and the parts without large strings are shared.
 */
export function blankStrings<T>(root: T, paths: readonly (readonly PathStep[])[]): T {
  const top: Record<PathStep, unknown> = { root };
  const copies = new Set<unknown>();
  for (const path of paths) {
    let holder = top;
    let key: PathStep = "root";
    for (const step of path) {
      let child = holder[key];
      if (!copies.has(child)) {
        child = Array.isArray(child) ? [...child] : { ...(child as Record<string, unknown>) };
        copies.add(child);
        setOwn(holder, key, child);
      }
      holder = child as Record<PathStep, unknown>;
      key = step;
    }
    setOwn(holder, key, "");
  }
  return top.root as T;
}

/**
 * Puts `text` at `path` in a parsed JSON value, where a `""` must stand; `false` (and nothing changed) when
 * the path does not lead to an own `""` (the value did not come from `blankStrings` with that path).
 */
export function placeString(root: unknown, path: readonly unknown[], text: string): boolean {
  if (path.length === 0) return false;
  let holder: unknown = root;
  for (let i = 0; i < path.length; i++) {
    const step = path[i];
    const fits = Array.isArray(holder)
      ? Number.isInteger(step) && (step as number) >= 0 && (step as number) < holder.length
      : typeof holder === "object" &&
        holder !== null &&
        typeof step === "string" &&
        Object.hasOwn(holder, step);
    if (!fits) return false;
    const child: unknown = (holder as Record<PathStep, unknown>)[step as PathStep];
    if (i === path.length - 1) {
      if (child !== "") return false;
      setOwn(holder as Record<PathStep, unknown>, step as PathStep, text);
      return true;
    }
    holder = child;
  }
  return false;
}

/** `holder[key] = value` as an own property, even for the key `__proto__` (which `JSON.parse` makes own). */
function setOwn(holder: Record<PathStep, unknown>, key: PathStep, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    holder[key] = value;
  }
}
