import type { Dirent, Stats } from "node:fs";
import { lstat, readdir, realpath } from "node:fs/promises";
import path from "node:path";
import type { Diagnostic } from "@icode/workflow-errors";
import { candidatesForId, distinctLocations, pickWinner } from "./discover";
import { LIMITS } from "./limits";
import {
  type DiscoveryOptions,
  isIgnoredName,
  type Location,
  priorityOf,
  RESERVED_GLOBAL_NAME,
} from "./options";
import { describeFsError, errnoCode, problem } from "./problem";
import { entryMissing, kindOf } from "./safety";
import type { Layout, ResolveResult, Source, Target } from "./schema";

const TRAILING_SEPARATOR = path.sep === "\\" ? /[\\/]+$/ : /\/+$/;
const WORKFLOW_SHAPE =
  "A workflow is a .py file, or a folder holding an entry file with the folder's exact name.";

/**
 * Hints name no command of any front end. A path the user could check instead is written once, in
 * backticks (`Check the whole folder: \`code-review\`.`), and listing the workflows iCode finds is "the
 * workflow list", so that a front end can offer its own way to do either (the CLI shows
 * `icode workflow validate code-review` and `icode workflow list`); nothing else in a hint is in backticks.
 */

/**
 * The `resolve` stage of validating `<path>`: decides whether `given` (relative to
 * `options.cwd`) names one workflow, and which. A folder may be given as `code-review`, `code-review/` or
 * `code-review/code-review.py`. Returns the target, possibly with a `shadowed` warning, or error
 * diagnostics and no target. Nothing is read but folder listings and file metadata.
 */
export async function resolveTarget(given: string, options: DiscoveryOptions): Promise<ResolveResult> {
  const cwd = path.resolve(options.cwd);
  const fail = (d: Diagnostic): ResolveResult => ({ target: null, diagnostics: [d] });
  if (given.trim() === "") {
    return fail(
      problem("path_not_found", "No workflow path was given.", null, "Name a workflow `.py` file or folder."),
    );
  }
  const abs = path.resolve(cwd, given);
  const located = await locate(abs, cwd);
  if (located.kind === "missing") return fail(await notFound(given, abs, options));
  if (located.kind === "error") {
    return fail(
      problem("source_unreadable", `Cannot look at ${abs}: ${describeFsError(located.error)}.`, abs, null),
    );
  }
  if (located.kind === "case") {
    return fail(
      problem(
        "path_not_workflow",
        `${given} is spelled differently from its folder listing: ${path.dirname(located.given)} holds ` +
          `${JSON.stringify(path.basename(located.actual))}, not ${JSON.stringify(path.basename(located.given))}.`,
        located.given,
        `Use the exact name: ${display(located.actual + abs.slice(located.given.length), cwd)}.`,
      ),
    );
  }
  const places = await Places.of(options);
  const st = located.stat;
  if (TRAILING_SEPARATOR.test(given) && !st.isDirectory() && !st.isSymbolicLink()) {
    return fail(
      problem(
        "path_not_workflow",
        `${given} ends with a path separator, but ${path.basename(abs)} is not a folder.`,
        abs,
        `Leave out the trailing separator: \`${given.replace(TRAILING_SEPARATOR, "")}\`.`,
      ),
    );
  }
  if (st.isSymbolicLink()) {
    const inside = await insideProblem(given, abs, places, cwd);
    if (inside !== null) return fail(inside);
    return fail(
      problem(
        "path_is_link",
        `${given} is a symbolic link (or a Windows junction); iCode does not load workflows through links.`,
        abs,
        await linkHint(abs, cwd),
      ),
    );
  }
  const resolved = st.isDirectory()
    ? await resolveDirectory(given, abs, places, cwd)
    : st.isFile()
      ? await resolveFile(given, abs, places, cwd)
      : problem(
          "path_not_workflow",
          `${given} is a ${kindOf(st)}, not a \`.py\` file or a folder.`,
          abs,
          WORKFLOW_SHAPE,
        );
  if (!("layout" in resolved)) return fail(resolved);
  const target: Target = { path: given, ...resolved };
  const warning = target.location === null ? null : await shadowedBy(target, options);
  return { target, diagnostics: warning === null ? [] : [warning] };
}

type Resolved = Omit<Target, "path">;

async function resolveDirectory(
  given: string,
  dir: string,
  places: Places,
  cwd: string,
): Promise<Resolved | Diagnostic> {
  const name = path.basename(dir);
  const around = await aroundProblem(given, dir, places, cwd);
  if (around !== null) return around;
  if (isIgnoredName(name)) return ignored(given, dir);
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    return problem(
      "package_unreadable",
      `Cannot list the folder ${dir}: ${describeFsError(error)}.`,
      dir,
      null,
    );
  }
  const entryName = `${name}.py`;
  if (dirents.some((d) => d.name === entryName)) {
    const entry = path.join(dir, entryName);
    const entryProblem = await entryFileProblem(entry);
    if (entryProblem !== null) return entryProblem;
    return {
      layout: "package",
      workflowId: name,
      entry,
      packageDir: dir,
      location: await places.folderLocation(dir),
    };
  }
  const holds = await workflowFoldersIn(dir, dirents);
  if (holds.length > 0) {
    return problem(
      "path_not_workflow",
      `${given} is a folder that holds workflows (${holds.slice(0, 3).join(", ")}${holds.length > 3 ? ", …" : ""}), not a workflow.`,
      dir,
      `Name one workflow, for example \`${display(path.join(dir, holds[0]!), cwd)}\`.`,
    );
  }
  const d = entryMissing(dir, path.join(dir, entryName));
  const lookalike = dirents.find((e) => e.name.toLowerCase() === entryName.toLowerCase());
  const pyFiles = dirents.filter((e) => e.name.endsWith(".py") && !isIgnoredName(e.name)).map((e) => e.name);
  if (lookalike !== undefined) {
    d.hint = `${lookalike.name} differs from the folder's name in case; rename it to ${entryName}.`;
  } else if (pyFiles.length > 0) {
    d.hint =
      `Add ${display(path.join(dir, entryName), cwd)} to make the folder a workflow, or name one of its files ` +
      `to check it as a single workflow, for example \`${display(path.join(dir, pyFiles.sort()[0]!), cwd)}\`.`;
  }
  return d;
}

async function resolveFile(
  given: string,
  file: string,
  places: Places,
  cwd: string,
): Promise<Resolved | Diagnostic> {
  const name = path.basename(file);
  const parent = path.dirname(file);
  if (
    name.endsWith(".py") &&
    name === `${path.basename(parent)}.py` &&
    !(await places.holdsWorkflows(parent))
  ) {
    return resolveFolderEntry(given, parent, file, places, cwd);
  }
  if (await places.isReserved(file)) return reserved(given, file);
  const inside = await insideProblem(given, file, places, cwd);
  if (inside !== null) return inside;
  if (!name.endsWith(".py")) {
    return problem("path_not_workflow", `${given} is not a \`.py\` file or a folder.`, file, WORKFLOW_SHAPE);
  }
  if (isIgnoredName(name)) return ignored(given, file);
  return {
    layout: "file",
    workflowId: name.slice(0, -3),
    entry: file,
    packageDir: null,
    location: await places.fileLocation(parent),
  };
}

/** A file (or link) inside a workflow folder is not a workflow of its own. */
async function insideProblem(
  given: string,
  file: string,
  places: Places,
  cwd: string,
): Promise<Diagnostic | null> {
  const folder = await insideWorkflowFolder(path.dirname(file), places);
  if (folder === null) return null;
  return problem(
    "path_not_workflow",
    `${given} is inside the workflow folder ${folder}; nothing inside a workflow folder is a workflow of its own.`,
    file,
    `Check the whole folder: \`${display(folder, cwd)}\`.`,
  );
}

/** `code-review/code-review.py`: the folder is checked. */
async function resolveFolderEntry(
  given: string,
  dir: string,
  entry: string,
  places: Places,
  cwd: string,
): Promise<Resolved | Diagnostic> {
  let st: Stats;
  try {
    st = await lstat(dir);
  } catch (error) {
    return problem("package_unreadable", `Cannot look at ${dir}: ${describeFsError(error)}.`, dir, null);
  }
  if (st.isSymbolicLink()) {
    return problem(
      "path_is_link",
      `The workflow folder ${dir} is a symbolic link (or a Windows junction); iCode does not load workflows through links.`,
      dir,
      await linkHint(dir, cwd),
    );
  }
  const around = await aroundProblem(given, dir, places, cwd);
  if (around !== null) return around;
  if (isIgnoredName(path.basename(dir))) return ignored(given, dir);
  return {
    layout: "package",
    workflowId: path.basename(dir),
    entry,
    packageDir: dir,
    location: await places.folderLocation(dir),
  };
}

/** The checks that concern where a folder sits: reserved, a folder of workflows, inside a workflow folder. */
async function aroundProblem(
  given: string,
  dir: string,
  places: Places,
  cwd: string,
): Promise<Diagnostic | null> {
  if (await places.isReserved(dir)) return reserved(given, dir);
  if (await places.holdsWorkflows(dir)) {
    return problem(
      "path_not_workflow",
      `${given} is a folder of workflows, not a workflow.`,
      dir,
      "Name one of the workflows in it; the workflow list shows them.",
    );
  }
  if (path.basename(dir) === ".chrys" && (await isDirectory(path.join(dir, "workflows")))) {
    return problem(
      "path_not_workflow",
      `${given} is the .chrys folder around a folder of workflows, not a workflow.`,
      dir,
      `Name one of the workflows in ${display(path.join(dir, "workflows"), cwd)}; the workflow list shows them.`,
    );
  }
  if (await isDirectory(path.join(dir, ".chrys", "workflows"))) {
    return problem(
      "path_not_workflow",
      `${given} is a project folder around a folder of workflows (.chrys/workflows), not a workflow.`,
      dir,
      `Name one of the workflows in ${display(path.join(dir, ".chrys", "workflows"), cwd)}; the workflow list shows them.`,
    );
  }
  const folder = await insideWorkflowFolder(path.dirname(dir), places);
  if (folder !== null) {
    return problem(
      "path_not_workflow",
      `${given} is inside the workflow folder ${folder}; nothing inside a workflow folder is a workflow of its own.`,
      dir,
      `Check the whole folder: \`${display(folder, cwd)}\`.`,
    );
  }
  return null;
}

async function entryFileProblem(entry: string): Promise<Diagnostic | null> {
  let st: Stats;
  try {
    st = await lstat(entry);
  } catch (error) {
    return problem("source_unreadable", `Cannot look at ${entry}: ${describeFsError(error)}.`, entry, null);
  }
  if (st.isSymbolicLink()) {
    return problem(
      "path_is_link",
      `The entry file ${entry} is a symbolic link; iCode does not load workflows through links.`,
      entry,
      "Replace the link with a copy of the file it points to.",
    );
  }
  if (!st.isFile()) {
    return problem(
      "path_not_workflow",
      `The entry file ${entry} is a ${kindOf(st)}, not a regular file.`,
      entry,
      WORKFLOW_SHAPE,
    );
  }
  return null;
}

/** The nearest folder at or above `start` that holds an entry file of its own name, below any location. */
async function insideWorkflowFolder(start: string, places: Places): Promise<string | null> {
  let dir = start;
  for (let level = 0; level <= LIMITS.packageDepth; level++) {
    const parent = path.dirname(dir);
    if (parent === dir || (await places.holdsWorkflows(dir))) return null;
    if (await isFile(path.join(dir, `${path.basename(dir)}.py`))) return dir;
    dir = parent;
  }
  return null;
}

async function workflowFoldersIn(dir: string, dirents: Dirent[]): Promise<string[]> {
  const found = await Promise.all(
    dirents
      .filter((d) => d.isDirectory() && !isIgnoredName(d.name))
      .map(async (d) => ((await isFile(path.join(dir, d.name, `${d.name}.py`))) ? d.name : null)),
  );
  return found.filter((n): n is string => n !== null).sort();
}

async function shadowedBy(target: Target, options: DiscoveryOptions): Promise<Diagnostic | null> {
  const own = priorityOf(target.location!, target.layout);
  const better = candidatesForId(target.workflowId, options).filter(
    (c) => priorityOf(c.source, c.layout) < own,
  );
  const { winner } = pickWinner(better, options);
  if (winner === null) return null;
  const where = winner.packageDir ?? winner.path;
  return problem(
    "shadowed",
    `Another workflow with the ID ${JSON.stringify(target.workflowId)} is found first (${describe(winner.source, winner.layout)} ` +
      `${where}), so runs use that one, not ${target.path}.`,
    target.entry,
    `Rename one of them, or remove ${where} if it is an old copy.`,
  );
}

function describe(source: Source, layout: Layout): string {
  return `${source} ${layout === "package" ? "workflow folder" : "file"}`;
}

async function notFound(given: string, abs: string, options: DiscoveryOptions): Promise<Diagnostic> {
  const base = path.basename(abs);
  const id = base.endsWith(".py") ? base.slice(0, -3) : base;
  let hint = "Check the path; the workflow list shows the workflows iCode finds.";
  if (id !== "" && !isIgnoredName(id)) {
    const { winner } = pickWinner(candidatesForId(id, options), options);
    if (winner !== null) {
      const where = display(winner.packageDir ?? winner.path, path.resolve(options.cwd));
      hint = `The ${winner.source} workflow ${JSON.stringify(id)} is at \`${where}\`.`;
    }
  }
  return problem("path_not_found", `Nothing exists at ${given}.`, abs, hint);
}

function ignored(given: string, file: string): Diagnostic {
  return problem(
    "name_ignored",
    `iCode never loads ${given}: names starting with "." or "_" are ignored.`,
    file,
    "Rename it so that the name starts with a letter or digit.",
  );
}

function reserved(given: string, file: string): Diagnostic {
  return problem(
    "name_reserved",
    `${given} is in the folder "${RESERVED_GLOBAL_NAME}" of the global workflow directory, which iCode reserves for its own files.`,
    file,
    `Rename the workflow folder; "${RESERVED_GLOBAL_NAME}" cannot be a workflow in the global location.`,
  );
}

async function linkHint(abs: string, cwd: string): Promise<string> {
  try {
    const real = await realpath(abs);
    return `Check the real location instead, \`${display(real, cwd)}\`, or replace the link with a copy.`;
  } catch {
    return "Replace the link with a copy of what it points to.";
  }
}

/** A path as the user would type it: relative to `cwd` when inside it, else absolute. */
function display(abs: string, cwd: string): string {
  const rel = path.relative(cwd, abs);
  if (rel === "") return ".";
  if (rel.startsWith("..") || path.isAbsolute(rel)) return abs;
  return rel;
}

type Located =
  | { kind: "found"; stat: Stats }
  | { kind: "missing" }
  | { kind: "case"; given: string; actual: string }
  | { kind: "error"; error: unknown };

/**
 * Looks the path up one name at a time against folder listings (the part below `cwd`, or all of it), so
 * that a name spelled in a different case is caught the same way on every file system.
 */
async function locate(abs: string, cwd: string): Promise<Located> {
  const inside = abs === cwd || abs.startsWith(cwd.endsWith(path.sep) ? cwd : cwd + path.sep);
  let current = inside ? cwd : path.parse(abs).root;
  for (const part of path.relative(current, abs).split(path.sep)) {
    if (part === "") continue;
    const next = path.join(current, part);
    let names: string[] | null = null;
    try {
      names = await readdir(current);
    } catch {
      names = null;
    }
    if (names !== null && !names.includes(part)) {
      const folded = fold(part);
      const actual = names.find((n) => fold(n) === folded && n.normalize("NFC") !== part.normalize("NFC"));
      if (actual !== undefined) return { kind: "case", given: next, actual: path.join(current, actual) };
    }
    current = next;
  }
  try {
    return { kind: "found", stat: await lstat(abs) };
  } catch (error) {
    const code = errnoCode(error);
    return code === "ENOENT" || code === "ENOTDIR" ? { kind: "missing" } : { kind: "error", error };
  }
}

function fold(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isFile();
  } catch {
    return false;
  }
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** The discovery locations, compared by real path so that a path through a link still matches. */
class Places {
  private constructor(
    private readonly locations: Array<Location & { real: string | null }>,
    private readonly reservedDir: string | null,
  ) {}

  static async of(options: DiscoveryOptions): Promise<Places> {
    const locations = await Promise.all(
      distinctLocations(options).map(async (l) => ({ ...l, real: await realOrNull(l.dir) })),
    );
    const global = locations.find((l) => l.source === "global");
    const reservedDir = global?.real ? path.join(global.real, RESERVED_GLOBAL_NAME) : null;
    return new Places(locations, reservedDir);
  }

  private async sourceOf(dir: string): Promise<Source | null> {
    const real = await realOrNull(dir);
    if (real === null) return null;
    return this.locations.find((l) => l.real === real)?.source ?? null;
  }

  /** The location a single file's folder is, if any. */
  fileLocation(dir: string): Promise<Source | null> {
    return this.sourceOf(dir);
  }

  /** The location a workflow folder sits in, if any; built-in workflows are single files only. */
  async folderLocation(dir: string): Promise<Source | null> {
    const source = await this.sourceOf(path.dirname(dir));
    return source === "builtin" ? null : source;
  }

  /** A discovery location, or any `.chrys/workflows` folder. */
  async holdsWorkflows(dir: string): Promise<boolean> {
    if (path.basename(dir) === "workflows" && path.basename(path.dirname(dir)) === ".chrys") return true;
    return (await this.sourceOf(dir)) !== null;
  }

  /** The global location's `sdk` folder or anything in it. */
  async isReserved(file: string): Promise<boolean> {
    if (this.reservedDir === null) return false;
    const real = (await realOrNull(path.dirname(file))) ?? path.dirname(file);
    const full = path.join(real, path.basename(file));
    return full === this.reservedDir || full.startsWith(this.reservedDir + path.sep);
  }
}

async function realOrNull(p: string): Promise<string | null> {
  try {
    return await realpath(p);
  } catch {
    return null;
  }
}
