import path from "node:path";
import type { Layout, Source } from "./schema";

/**
 * Where to look. Nothing is read from `process.cwd()` or `process.env`: the caller passes the working
 * directory, the configuration directory (see `configDir`) and the folder of built-in workflows.
 */
export interface DiscoveryOptions {
  /** The working directory; project workflows live in `<cwd>/.chrys/workflows/`. */
  cwd: string;
  /** The configuration directory; global workflows live in `<chrysHome>/workflows/`. */
  chrysHome: string;
  /** The folder of built-in workflows shipped with iCode, `null` for none. */
  builtinDir: string | null;
  /**
   * The user the ownership checks compare against: defaults to `process.getuid?.()` and
   * `process.getgid?.()`. `null` (or a platform without them, such as Windows) skips the ownership check.
   */
  uid?: number | null;
  gid?: number | null;
}

/** The user files must belong to, or `null` when ownership is not checked. */
export type Owner = { uid: number; gid: number } | null;

export function ownerOf(options: { uid?: number | null; gid?: number | null }): Owner {
  const uid = options.uid === undefined ? (process.getuid?.() ?? null) : options.uid;
  const gid = options.gid === undefined ? (process.getgid?.() ?? null) : options.gid;
  if (uid === null) return null;
  return { uid, gid: gid ?? -1 };
}

export interface Location {
  source: Source;
  dir: string;
}

/**
 * `path.join(dir, name)` for a folder from `locationsOf` (absolute and normalized) and a name from its
 * listing, by concatenation: discovery builds one or two of these per candidate, and `path.join` normalizes
 * the whole path again each time (≈ 10 ms for 1,000 workflows in a new process).
 */
export function childPath(dir: string, name: string): string {
  return dir.endsWith(path.sep) ? dir + name : dir + path.sep + name;
}

/** The discovery locations in priority order. */
export function locationsOf(options: DiscoveryOptions): Location[] {
  const locations: Location[] = [
    { source: "project", dir: path.resolve(options.cwd, ".chrys", "workflows") },
    { source: "global", dir: path.resolve(options.cwd, options.chrysHome, "workflows") },
  ];
  if (options.builtinDir !== null) {
    locations.push({ source: "builtin", dir: path.resolve(options.cwd, options.builtinDir) });
  }
  return locations;
}

/** The spec's five-level priority: 1 is found first. */
export function priorityOf(source: Source, layout: Layout): number {
  if (source === "project") return layout === "package" ? 1 : 2;
  if (source === "global") return layout === "package" ? 3 : 4;
  return 5;
}

/** Names iCode never loads: those starting with `.` or `_`. */
export function isIgnoredName(name: string): boolean {
  return name.startsWith(".") || name.startsWith("_");
}

/** The folder name the global location keeps for iCode's own files. */
export const RESERVED_GLOBAL_NAME = "sdk";

/** Code point order, as Python's `sorted` orders `str` (JavaScript's default compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}
