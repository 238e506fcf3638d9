import { randomBytes } from "node:crypto";
import { link, lstat, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { builtinIdFor } from "./builtins";
import { canonicalProfileYaml } from "./canonical";
import { sha256 } from "./files";
import { type ConfigProblem, ProblemSink } from "./problems";
import type { AgentFileRead } from "./read/agent-profile";

/** What loading did to a user profile file (agent-profiles.md 1.4). */
export const NormalizationChangeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("renamed"), from: z.string(), to: z.string() }),
  z.object({ kind: z.literal("conflict"), from: z.string(), to: z.string() }),
  z.object({ kind: z.literal("id_written"), file: z.string(), id: z.string() }),
]);
export type NormalizationChange = z.infer<typeof NormalizationChangeSchema>;

export interface UserFile {
  path: string;
  digest: string;
  read: AgentFileRead;
}

export interface LoadedUserFile {
  path: string;
  digest: string;
  read: AgentFileRead;
  /** The id the profile carries for this run, or null when none could be written. */
  id: string | null;
}

const MAX_CONFLICT_SUFFIX = 100;

/**
 * Puts the user profile files into canonical form: renames each to `<name>.yaml` (a file whose target is held
 * by a file that keeps that name is renamed `<file>.conflict`, `.conflict-2` … and not loaded), then gives
 * every profile without an id one and rewrites its file canonically. With `write: false` nothing on disk
 * changes: files load where they are, conflicting ones are not loaded, and profiles without id carry none.
 */
export async function normalizeUserFiles(
  dir: string,
  files: readonly UserFile[],
  options: { write: boolean; takenIds: Set<string> },
): Promise<{ loaded: LoadedUserFile[]; problems: ConfigProblem[]; changes: NormalizationChange[] }> {
  const problems: ConfigProblem[] = [];
  const changes: NormalizationChange[] = [];
  const warn = (
    file: string,
    code: ConfigProblem["code"],
    severity: "error" | "warning",
    message: string,
  ) => {
    const sink = new ProblemSink(file);
    sink.add(code, severity, null, message);
    problems.push(...sink.problems);
  };
  const candidates = files.filter((f) => f.read.settings !== null);
  const targetOf = (f: UserFile) => join(dir, `${f.read.name}.yaml`);
  const movers: { file: UserFile; at: string; stuck: boolean }[] = [];
  const loaded: { file: UserFile; path: string }[] = [];
  for (const f of candidates) {
    if (basename(f.path) === `${f.read.name}.yaml` || (await sameFile(f.path, targetOf(f))))
      loaded.push({ file: f, path: f.path });
    else movers.push({ file: f, at: f.path, stuck: false });
  }

  // Phase 1: move every file that changes name out of the way, so that files that want each other's
  // names both end up right. The temporary names start with "." and are never loaded.
  if (options.write) {
    for (const m of movers) {
      const temp = join(dir, `.${basename(m.file.path)}.${randomBytes(4).toString("hex")}.renaming`);
      try {
        await rename(m.file.path, temp);
        m.at = temp;
      } catch (error) {
        m.stuck = true;
        warn(
          m.file.path,
          "profile_rename_failed",
          "warning",
          `cannot rename this file to ${basename(targetOf(m.file))} (${errorCode(error)}); it is loaded from where it is`,
        );
      }
    }
  }

  // Phase 2: each file takes its name in load order, unless the name is held.
  const claimed = new Set(loaded.map((l) => l.file.read.name as string));
  for (const m of movers) {
    const target = targetOf(m.file);
    const name = m.file.read.name as string;
    const held =
      options.write && !m.stuck
        ? await exists(target)
        : claimed.has(name) || ((await exists(target)) && !(await isMover(target, movers)));
    if (held) {
      await placeConflict(m, target, options.write, warn, changes);
      continue;
    }
    claimed.add(name);
    if (!options.write || m.stuck) {
      loaded.push({ file: m.file, path: m.file.path });
      continue;
    }
    try {
      await moveNoReplace(m.at, target);
      changes.push({ kind: "renamed", from: m.file.path, to: target });
      loaded.push({ file: m.file, path: target });
    } catch (error) {
      const back = await restore(m.at, m.file.path);
      warn(
        back,
        "profile_rename_failed",
        "warning",
        `cannot rename this file to ${basename(target)} (${errorCode(error)}); it is loaded from where it is`,
      );
      loaded.push({ file: m.file, path: back });
    }
  }

  // Ids: profiles without one get the built-in id for a built-in name, else 12 random hex digits, written back.
  const out: LoadedUserFile[] = [];
  for (const l of loaded) {
    const read = l.file.read;
    if (read.id !== null) {
      out.push({ path: l.path, digest: l.file.digest, read, id: read.id });
      continue;
    }
    if (!options.write) {
      out.push({ path: l.path, digest: l.file.digest, read, id: null });
      continue;
    }
    const id = builtinIdFor(read.name as string) ?? newProfileId(options.takenIds);
    options.takenIds.add(id);
    const text = canonicalProfileYaml(read.canonical?.accepted ?? {}, read.canonical?.kept ?? [], id);
    try {
      await writeAtomic(l.path, text);
      changes.push({ kind: "id_written", file: l.path, id });
      out.push({ path: l.path, digest: sha256(text), read, id });
    } catch (error) {
      warn(
        l.path,
        "profile_id_write_failed",
        "warning",
        `cannot write the assigned id ${id} into the file (${errorCode(error)}); the profile has no id for this run and cannot be matched by id. Make the file writable, or add an id yourself.`,
      );
      out.push({ path: l.path, digest: l.file.digest, read, id: null });
    }
  }
  return { loaded: out, problems, changes };
}

/** A new profile id: 12 lowercase hexadecimal characters, not already taken. */
export function newProfileId(taken: ReadonlySet<string> = new Set()): string {
  for (;;) {
    const id = randomBytes(6).toString("hex");
    if (!taken.has(id)) return id;
  }
}

async function placeConflict(
  m: { file: UserFile; at: string; stuck: boolean },
  target: string,
  write: boolean,
  warn: (file: string, code: ConfigProblem["code"], severity: "error" | "warning", message: string) => void,
  changes: NormalizationChange[],
): Promise<void> {
  const why = `its name "${m.file.read.name}" belongs to ${basename(target)}, which another file already holds`;
  const fix = `To keep both, give one a new name, delete its id and restore the .yaml extension.`;
  if (!write) {
    warn(
      m.file.path,
      "profile_name_conflict",
      "error",
      `${why}; this file is not loaded (loading with normalization would rename it to ${basename(m.file.path)}.conflict). ${fix}`,
    );
    return;
  }
  if (!m.stuck) {
    for (let n = 1; n <= MAX_CONFLICT_SUFFIX; n += 1) {
      const dest = `${m.file.path}.conflict${n === 1 ? "" : `-${n}`}`;
      if (await exists(dest)) continue;
      try {
        await moveNoReplace(m.at, dest);
        changes.push({ kind: "conflict", from: m.file.path, to: dest });
        warn(
          dest,
          "profile_name_conflict",
          "error",
          `${why}; the file was renamed from ${basename(m.file.path)} to ${basename(dest)} and is not loaded. ${fix}`,
        );
        return;
      } catch {
        break;
      }
    }
  }
  const at = m.stuck ? m.file.path : await restore(m.at, m.file.path);
  warn(
    at,
    "profile_name_conflict",
    "error",
    `${why}, and the file cannot be renamed to ${basename(m.file.path)}.conflict; it stays where it is and is not loaded. ${fix}`,
  );
}

/** Moves `from` to `to` without replacing an existing `to` (a hard link where the file system has them). */
async function moveNoReplace(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
    await unlink(from);
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") throw error;
    if (
      code !== "EPERM" &&
      code !== "ENOTSUP" &&
      code !== "EXDEV" &&
      code !== "ENOSYS" &&
      code !== "EOPNOTSUPP"
    )
      throw error;
    if (await exists(to)) throw Object.assign(new Error(`${to} exists`), { code: "EEXIST" });
    await rename(from, to);
  }
}

/** Puts a moved file back under its old name; returns where the file is now. */
async function restore(at: string, original: string): Promise<string> {
  if (at === original) return at;
  try {
    if (await exists(original)) return at;
    await rename(at, original);
    return original;
  } catch {
    return at;
  }
}

async function writeAtomic(path: string, text: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeFile(temp, text, { encoding: "utf8", flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Same file on disk (a case or Unicode-normalization difference on a file system that ignores it). */
async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

async function isMover(path: string, movers: readonly { file: UserFile }[]): Promise<boolean> {
  for (const m of movers) if (await sameFile(path, m.file.path)) return true;
  return false;
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}
