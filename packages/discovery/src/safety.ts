import { closeSync, constants, type Dirent, lstatSync, openSync, readdirSync, type Stats } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "@icode/workflow-errors";
import { LIMITS } from "./limits";
import { compareCodePoints, type Owner, ownerOf } from "./options";
import { describeFsError, errnoCode, problem } from "./problem";
import type { Candidate, SourceFile } from "./schema";

/** What to check: a single file (`path`), or a workflow folder (`packageDir`) and its entry file (`path`). */
export type CheckSubject = Pick<Candidate, "layout" | "path" | "packageDir">;

export interface CheckOptions {
  /** The user files must belong to; see `DiscoveryOptions.uid`. Pass `null` to skip (built-ins). */
  uid?: number | null;
  gid?: number | null;
  /** Stop at the first problem (discovery only needs a reason); validate collects them all. */
  stopAtFirst?: boolean;
}

/** A file that passed the checks: a `SourceFile` before it is hashed. */
export type CheckedFile = Omit<SourceFile, "sha256">;

export interface CheckResult {
  /** The files that count: sorted by `relPath`, complete only when there are no diagnostics. */
  files: CheckedFile[];
  diagnostics: Diagnostic[];
}

const PROBE_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The safety checks of the spec's "File discovery" section, shared by discovery and validate. Nothing is
 * executed and no content is read: `lstat`, `readdir` and an open-and-close probe for readability.
 *
 * - A link (a Windows junction counts as one) is refused: the file, the folder, anything inside it.
 * - Anything that is not a regular file or folder (named pipe, socket, device) is refused.
 * - Ownership (see docs/discovery.md): each checked file and folder belongs to the user or to root and
 *   cannot be written by other users; group write is accepted only on the user's own files whose group is
 *   the user's primary group (the "user private group" convention).
 * - Limits: entry file 4 MiB; a folder holds at most 1000 files and folders, 512 MiB, 16 folder levels.
 * - Inside a folder, names starting with `.` and `*.pyc` files in `__pycache__` folders are neither
 *   checked nor counted; `__pycache__` folders themselves are not counted.
 */
export async function checkWorkflow(subject: CheckSubject, options: CheckOptions = {}): Promise<CheckResult> {
  return checkWorkflowSync(subject, options);
}

/**
 * `checkWorkflow` without the promise. Synchronous `lstat`/`open` calls cost a few microseconds where a
 * round trip through libuv's thread pool costs tens, and discovery makes thousands of them; callers yield
 * to the event loop between workflows, so one call blocks for at most one folder's worth of calls.
 */
export function checkWorkflowSync(subject: CheckSubject, options: CheckOptions = {}): CheckResult {
  const owner = ownerOf(options);
  const stopAtFirst = options.stopAtFirst ?? false;
  if (subject.layout === "file" || subject.packageDir === null) return checkFile(subject.path, owner);
  return checkPackage(subject.packageDir, subject.path, owner, stopAtFirst);
}

function checkFile(entry: string, owner: Owner): CheckResult {
  const fail = (d: Diagnostic): CheckResult => ({ files: [], diagnostics: [d] });
  let st: Stats;
  try {
    st = lstatSync(entry);
  } catch (error) {
    return fail(
      problem("source_unreadable", `Cannot read ${entry}: ${describeFsError(error)}.`, entry, null),
    );
  }
  if (st.isSymbolicLink()) return fail(linkProblem("path_is_link", entry, "workflow file"));
  if (!st.isFile()) return fail(notRegularFile(entry, st));
  const ownership = ownershipProblem(entry, st, owner, "source_unreadable");
  if (ownership !== null) return fail(ownership);
  if (st.size > LIMITS.sourceBytes) return fail(sourceTooLarge(entry, st.size));
  const probe = probeRead(entry, "source_unreadable");
  if (probe !== null) return fail(probe);
  return { files: [{ relPath: path.basename(entry), absPath: entry, size: st.size }], diagnostics: [] };
}

function checkPackage(dir: string, entry: string, owner: Owner, stopAtFirst: boolean): CheckResult {
  const fail = (d: Diagnostic): CheckResult => ({ files: [], diagnostics: [d] });
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (error) {
    return fail(problem("package_unreadable", `Cannot read ${dir}: ${describeFsError(error)}.`, dir, null));
  }
  if (st.isSymbolicLink()) return fail(linkProblem("path_is_link", dir, "workflow folder"));
  if (!st.isDirectory()) return fail(notRegularFile(dir, st));
  const ownership = ownershipProblem(dir, st, owner, "package_unreadable");
  if (ownership !== null) return fail(ownership);

  const entryName = path.basename(entry);
  let entryStat: Stats;
  try {
    entryStat = lstatSync(entry);
  } catch (error) {
    if (errnoCode(error) === "ENOENT" || errnoCode(error) === "ENOTDIR")
      return fail(entryMissing(dir, entry));
    return fail(
      problem("source_unreadable", `Cannot read ${entry}: ${describeFsError(error)}.`, entry, null),
    );
  }
  if (entryStat.isSymbolicLink()) return fail(linkProblem("path_is_link", entry, "entry file"));
  if (!entryStat.isFile()) return fail(notRegularFile(entry, entryStat));

  const walk = new PackageWalk(dir, entryName, owner, stopAtFirst);
  walk.run();
  if (!walk.sawEntry && walk.diagnostics.length === 0) return fail(entryMissing(dir, entry));
  walk.files.sort((a, b) => compareCodePoints(a.relPath, b.relPath));
  return { files: walk.files, diagnostics: walk.diagnostics };
}

/** Walks a workflow folder once, counting, checking and listing what counts. */
class PackageWalk {
  readonly files: CheckedFile[] = [];
  readonly diagnostics: Diagnostic[] = [];
  sawEntry = false;
  private entries = 0;
  private bytes = 0;
  private stopped = false;

  constructor(
    private readonly root: string,
    private readonly entryName: string,
    private readonly owner: Owner,
    private readonly stopAtFirst: boolean,
  ) {}

  run(): void {
    this.visit(this.root, "", 0, false);
  }

  private report(d: Diagnostic): void {
    this.diagnostics.push(d);
    if (this.stopAtFirst) this.stopped = true;
  }

  /** A limit ends the walk whatever `stopAtFirst` says: counting on would only cost time. */
  private limit(d: Diagnostic): void {
    this.diagnostics.push(d);
    this.stopped = true;
  }

  private visit(abs: string, rel: string, depth: number, inPycache: boolean): void {
    if (this.stopped) return;
    let dirents: Dirent[];
    try {
      dirents = readdirSync(abs, { withFileTypes: true });
    } catch (error) {
      this.report(
        problem(
          "package_unreadable",
          `Cannot list the folder ${abs}: ${describeFsError(error)}.`,
          abs,
          "Give yourself read and search permission on it, for example with `chmod u+rx`.",
        ),
      );
      return;
    }
    const counted = dirents.filter((d) => !this.skipped(d.name, inPycache));
    counted.sort((a, b) => compareCodePoints(a.name, b.name));
    if (rel === "" && counted.some((d) => d.name === this.entryName)) this.sawEntry = true;

    this.entries += counted.filter((d) => !(d.isDirectory() && d.name === "__pycache__")).length;
    if (this.entries > LIMITS.packageEntries) {
      this.limit(
        problem(
          "package_too_large",
          `The workflow folder ${this.root} holds more than ${LIMITS.packageEntries} files and folders ` +
            `(names starting with "." and __pycache__ bytecode not counted).`,
          this.root,
          "Move data and dependencies out of the folder, or into a folder whose name starts with `.` (such as `.venv`).",
        ),
      );
      return;
    }

    const stats = counted.map((d) => {
      const child = path.join(abs, d.name);
      try {
        return { dirent: d, child, st: lstatSync(child), error: null };
      } catch (error) {
        return { dirent: d, child, st: null, error };
      }
    });
    const subfolders: Array<{ child: string; childRel: string; pycache: boolean }> = [];
    for (const { dirent, child, st, error } of stats) {
      if (this.stopped) return;
      const childRel = rel === "" ? dirent.name : `${rel}/${dirent.name}`;
      const isEntry = childRel === this.entryName;
      if (st === null) {
        if (errnoCode(error) === "ENOENT") continue;
        this.report(
          problem(
            isEntry ? "source_unreadable" : "package_unreadable",
            `Cannot read ${child}: ${describeFsError(error)}.`,
            child,
            null,
          ),
        );
        continue;
      }
      if (st.isSymbolicLink()) {
        this.report(
          linkProblem(isEntry ? "path_is_link" : "package_link", child, "file in the workflow folder"),
        );
        continue;
      }
      if (st.isDirectory()) {
        const pycache = dirent.name === "__pycache__";
        if (!pycache && depth + 1 > LIMITS.packageDepth) {
          this.limit(
            problem(
              "package_too_large",
              `The workflow folder ${this.root} is nested more than ${LIMITS.packageDepth} folder levels deep at ${child}.`,
              child,
              "Flatten the folder structure.",
            ),
          );
          return;
        }
        if (!pycache) {
          const ownership = ownershipProblem(child, st, this.owner, "package_unreadable");
          if (ownership !== null) {
            this.report(ownership);
            continue;
          }
        }
        subfolders.push({ child, childRel, pycache });
        continue;
      }
      if (!st.isFile()) {
        this.report(
          isEntry
            ? notRegularFile(child, st)
            : problem(
                "package_unsupported_file",
                `${child} is a ${kindOf(st)}; a workflow folder may hold only regular files and folders.`,
                child,
                "Remove it, or rename it to start with `.` so that iCode ignores it.",
              ),
        );
        continue;
      }
      const ownership = ownershipProblem(
        child,
        st,
        this.owner,
        isEntry ? "source_unreadable" : "package_unreadable",
      );
      if (ownership !== null) {
        this.report(ownership);
        continue;
      }
      if (isEntry && st.size > LIMITS.sourceBytes) {
        this.report(sourceTooLarge(child, st.size));
        continue;
      }
      this.bytes += st.size;
      if (this.bytes > LIMITS.packageBytes) {
        this.limit(
          problem(
            "package_too_large",
            `The files in the workflow folder ${this.root} add up to more than ${LIMITS.packageBytes / 1024 / 1024} MiB.`,
            this.root,
            "Move large data files out of the folder, or into a folder whose name starts with `.`.",
          ),
        );
        return;
      }
      const probe = probeRead(child, isEntry ? "source_unreadable" : "package_unreadable");
      if (probe !== null) {
        this.report(probe);
        continue;
      }
      this.files.push({ relPath: childRel, absPath: child, size: st.size });
    }
    for (const sub of subfolders) {
      if (this.stopped) return;
      this.visit(sub.child, sub.childRel, depth + 1, sub.pycache);
    }
  }

  private skipped(name: string, inPycache: boolean): boolean {
    return name.startsWith(".") || (inPycache && name.endsWith(".pyc"));
  }
}

/**
 * The ownership rule (docs/discovery.md): owned by the user or by root; never writable by others; writable
 * by the group only when the file is the user's own and its group is the user's primary group.
 */
export function ownershipProblem(
  file: string,
  st: Pick<Stats, "uid" | "gid" | "mode">,
  owner: Owner,
  code: "source_unreadable" | "package_unreadable",
): Diagnostic | null {
  if (owner === null) return null;
  const mode = () => (st.mode & 0o7777).toString(8).padStart(4, "0");
  if (st.uid !== owner.uid && st.uid !== 0) {
    return problem(
      code,
      `${file} belongs to user ${st.uid}, not to you (user ${owner.uid}) or root; iCode loads only workflow files you own.`,
      file,
      "Copy the workflow to a file you own, or change its owner with `chown`.",
    );
  }
  if ((st.mode & 0o002) !== 0) {
    return problem(
      code,
      `${file} can be changed by every user (mode ${mode()}); iCode loads only workflow files other users cannot change.`,
      file,
      `Remove the write permission of others: \`chmod go-w '${file}'\`.`,
    );
  }
  if ((st.mode & 0o020) !== 0 && !(st.uid === owner.uid && st.gid === owner.gid)) {
    return problem(
      code,
      `${file} can be changed by the members of group ${st.gid} (mode ${mode()}); iCode loads only workflow files other users cannot change.`,
      file,
      `Remove the group write permission: \`chmod g-w '${file}'\`.`,
    );
  }
  return null;
}

function probeRead(file: string, code: "source_unreadable" | "package_unreadable"): Diagnostic | null {
  try {
    closeSync(openSync(file, PROBE_FLAGS));
    return null;
  } catch (error) {
    return problem(
      code,
      `Cannot read ${file}: ${describeFsError(error)}.`,
      file,
      errnoCode(error) === "EACCES" ? "Give yourself read permission, for example with `chmod u+r`." : null,
    );
  }
}

function linkProblem(code: "path_is_link" | "package_link", file: string, what: string): Diagnostic {
  return problem(
    code,
    `The ${what} ${file} is a symbolic link (or a Windows junction); iCode does not follow links in workflows.`,
    file,
    "Replace the link with a copy of the file or folder it points to.",
  );
}

function notRegularFile(file: string, st: Stats): Diagnostic {
  return problem(
    "path_not_workflow",
    `${file} is a ${kindOf(st)}, not a regular file.`,
    file,
    "A workflow is a `.py` file, or a folder holding an entry file with the folder's exact name.",
  );
}

function sourceTooLarge(file: string, size: number): Diagnostic {
  return problem(
    "source_too_large",
    `${file} is ${size} bytes; a workflow's entry file may be at most ${LIMITS.sourceBytes} bytes (4 MiB).`,
    file,
    "Move data out of the entry file into files the workflow reads, or into other modules of a workflow folder.",
  );
}

export function entryMissing(dir: string, entry: string): Diagnostic {
  const name = path.basename(dir);
  return problem(
    "entry_missing",
    `The folder ${dir} has no entry file named ${name}.py (exactly the folder's name).`,
    dir,
    `Add the entry file ${entry}, or name a single workflow file instead of the folder.`,
  );
}

export function kindOf(st: Stats): string {
  if (st.isFIFO()) return "named pipe";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "character device";
  if (st.isBlockDevice()) return "block device";
  if (st.isDirectory()) return "folder";
  if (st.isSymbolicLink()) return "symbolic link";
  if (st.isFile()) return "regular file";
  return "special file";
}
