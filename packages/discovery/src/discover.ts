import { type Dirent, lstatSync, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import {
  childPath,
  compareCodePoints,
  type DiscoveryOptions,
  isIgnoredName,
  type Location,
  locationsOf,
  type Owner,
  ownerOf,
  priorityOf,
  RESERVED_GLOBAL_NAME,
} from "./options";
import { describeFsError, errnoCode, problem } from "./problem";
import { checkWorkflowSync } from "./safety";
import type { Candidate, DiscoveredWorkflow, DiscoveryResult, Skipped } from "./schema";

/** The longest stretch of synchronous checks before discovery lets other work on the event loop run. */
const YIELD_AFTER_MS = 10;

/**
 * Finds the workflows `icode workflow list` shows, by the spec's "File discovery" rules, without running
 * or reading any workflow code: `<cwd>/.chrys/workflows/`, `<chrysHome>/workflows/` and the built-in
 * folder (single files only), each scanned one level deep. For each ID the candidates are tried in
 * priority order (project folder, project file, global folder, global file, built-in); the first that
 * passes `checkWorkflow` wins and the rest are its `shadows`. A candidate that fails is reported in
 * `skipped` and shadows nothing (clarification 20). Built-in workflows skip the ownership check.
 */
export async function discoverWorkflows(options: DiscoveryOptions): Promise<DiscoveryResult> {
  const skipped: Skipped[] = [];
  const candidates: Candidate[] = [];
  for (const location of distinctLocations(options)) {
    const scan = scanLocation(location);
    candidates.push(...scan.candidates);
    if (scan.failure !== null) skipped.push(scan.failure);
  }
  const byId = groupById(candidates);
  const ids = [...byId.keys()].sort(compareCodePoints);
  const owner = ownerOf(options); // once: asking for the group ID is a system call
  const workflows: DiscoveredWorkflow[] = [];
  // Date.now(), not performance.now(): the global `performance` loads perf_hooks (~1 ms) into a process (a
  // cold `icode workflow list`) that needs nothing else of it, and millisecond steps are enough here.
  let slice = Date.now();
  for (const id of ids) {
    const outcome = pickWinner(byId.get(id)!, options, owner);
    if (outcome.winner !== null) workflows.push(outcome.winner);
    skipped.push(...outcome.skipped);
    if (Date.now() - slice > YIELD_AFTER_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = Date.now();
    }
  }
  return { workflows, skipped };
}

/**
 * The locations to scan. When the project location is the global one (the working directory is the
 * parent of the configuration directory), it is scanned once, as `global`.
 */
export function distinctLocations(options: DiscoveryOptions): Location[] {
  const locations = locationsOf(options);
  const identities = locations.map((l) => identityOf(l.dir));
  return locations.filter((location, i) => {
    const id = identities[i];
    if (location.source !== "project" || id === null) return true;
    return !locations.some((other, j) => other.source === "global" && identities[j] === id);
  });
}

/** The folder's real path (case-canonical where the platform provides it), or `null` when it is missing. */
function identityOf(dir: string): string | null {
  try {
    return realpathSync.native(dir);
  } catch {
    return null;
  }
}

interface Scan {
  candidates: Candidate[];
  failure: Skipped | null;
}

function scanLocation(location: Location): Scan {
  let dirents: Dirent[];
  try {
    dirents = readdirSync(location.dir, { withFileTypes: true });
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return { candidates: [], failure: null };
    return {
      candidates: [],
      failure: {
        id: null,
        source: location.source,
        layout: null,
        path: location.dir,
        packageDir: null,
        reason: problem(
          "location_unreadable",
          `Cannot list the ${location.source} workflow folder ${location.dir}: ${describeFsError(error)}.`,
          location.dir,
          "Give yourself read and search permission on the folder, for example with `chmod u+rx`.",
        ),
      },
    };
  }
  const found = dirents.map((d) => classifyName(location, d.name, () => direntKind(d)));
  return { candidates: found.filter((c): c is Candidate => c !== null), failure: null };
}

type Kind = "file" | "dir" | "link" | "other";

function direntKind(d: Dirent): Kind {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "dir";
  if (d.isSymbolicLink()) return "link";
  return "other";
}

function statKind(st: Stats): Kind {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "dir";
  if (st.isSymbolicLink()) return "link";
  return "other";
}

/**
 * Whether the name `name` directly inside `location` is a workflow candidate. Files ending in `.py` (of
 * any type: a link or a named pipe is a candidate that fails its checks), and folders holding
 * `<name>/<name>.py` in any form; a link to such a folder is a candidate that fails its checks.
 */
function classifyName(location: Location, name: string, kind: () => Kind | null): Candidate | null {
  if (isIgnoredName(name)) return null;
  const found = kind();
  if (found === null) return null;
  const abs = childPath(location.dir, name);
  if (name.endsWith(".py") && found !== "dir") {
    return { id: name.slice(0, -3), source: location.source, layout: "file", path: abs, packageDir: null };
  }
  if (location.source === "builtin") return null;
  if (location.source === "global" && name === RESERVED_GLOBAL_NAME) return null;
  if (found === "link") {
    try {
      if (!statSync(abs).isDirectory()) return null;
    } catch {
      return null;
    }
  } else if (found !== "dir") {
    return null;
  }
  const entry = childPath(abs, `${name}.py`);
  try {
    lstatSync(entry);
  } catch {
    return null;
  }
  return { id: name, source: location.source, layout: "package", path: entry, packageDir: abs };
}

/** `classifyName` for a name that may not exist, looked up with `lstat` (validate's `shadowed` check). */
function classifyPath(location: Location, name: string): Candidate | null {
  return classifyName(location, name, () => {
    try {
      return statKind(lstatSync(childPath(location.dir, name)));
    } catch {
      return null;
    }
  });
}

/** Every candidate of one ID, best first. */
export function candidatesForId(id: string, options: DiscoveryOptions): Candidate[] {
  const found: Candidate[] = [];
  for (const location of distinctLocations(options)) {
    for (const name of [id, `${id}.py`]) {
      const candidate = classifyPath(location, name);
      if (candidate !== null && candidate.id === id) found.push(candidate);
    }
  }
  return found.sort(byPriority);
}

function byPriority(a: Candidate, b: Candidate): number {
  return priorityOf(a.source, a.layout) - priorityOf(b.source, b.layout);
}

function groupById(candidates: Candidate[]): Map<string, Candidate[]> {
  const byId = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    const list = byId.get(candidate.id);
    if (list === undefined) byId.set(candidate.id, [candidate]);
    else list.push(candidate);
  }
  for (const list of byId.values()) list.sort(byPriority);
  return byId;
}

export interface Pick {
  winner: DiscoveredWorkflow | null;
  skipped: Skipped[];
}

/**
 * Tries the candidates of one ID in priority order. A folder whose entry file turns out not to be there
 * with its exact name (a case-insensitive file system) is not a workflow and is dropped silently. `owner` is
 * `ownerOf(options)`, passed in by a caller that picks for many IDs.
 */
export function pickWinner(
  candidates: Candidate[],
  options: DiscoveryOptions,
  owner: Owner = ownerOf(options),
): Pick {
  const skipped: Skipped[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const candidate = candidates[i]!;
    const result = checkWorkflowSync(candidate, {
      uid: candidate.source === "builtin" || owner === null ? null : owner.uid,
      gid: owner?.gid ?? null,
      stopAtFirst: true,
    });
    const reason = result.diagnostics[0];
    if (reason === undefined) return { winner: { ...candidate, shadows: candidates.slice(i + 1) }, skipped };
    if (reason.code === "entry_missing") continue;
    skipped.push({ ...candidate, reason });
  }
  return { winner: null, skipped };
}
