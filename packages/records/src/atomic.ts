import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { canonicalJson } from "@icode/canonical-json";
import { storageFailed } from "./codes";

/**
 * Writes a file so that readers see either the old content or the new, never a mix: the bytes go to a
 * temporary sibling (`.<name>.<pid>.<random>.tmp`, see `atomicTempOwner`), which is fsynced and renamed over
 * the target; the folder is
 * then fsynced so the rename survives a power loss (skipped where folders cannot be opened, as on Windows).
 * Any failure removes the temporary file and throws `storage_failed`.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, what = "a record file"): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  let fd: number | null = null;
  try {
    fd = openSync(temp, "wx", 0o644);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(temp, path);
  } catch (cause) {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {}
    }
    try {
      rmSync(temp, { force: true });
    } catch {}
    throw storageFailed(what, path, cause);
  }
  fsyncDir(dir);
}

/** Writes `value` as canonical JSON (sorted keys, compact; clarification 22), atomically. */
export function writeJsonAtomic(path: string, value: unknown, what = "a record file"): void {
  let text: string;
  try {
    text = canonicalJson(value);
  } catch (cause) {
    throw storageFailed(what, path, cause);
  }
  writeFileAtomic(path, text, what);
}

/**
 * `writeFileAtomic` off the main thread: the same temporary file, fsync, rename and folder fsync, on libuv's
 * thread pool, so a run's other work goes on while the disk syncs. Rejects with `storage_failed`.
 */
export async function writeFileAtomicAsync(
  path: string,
  data: string | Uint8Array,
  what = "a record file",
): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  let handle: FileHandle | null = null;
  try {
    handle = await open(temp, "wx", 0o644);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = null;
    await rename(temp, path);
  } catch (cause) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    throw storageFailed(what, path, cause);
  }
  let folder: FileHandle | null = null;
  try {
    folder = await open(dir, "r");
    await folder.sync();
  } catch {
    // As in fsyncDir: best effort where folders cannot be opened or synced.
  } finally {
    await folder?.close().catch(() => undefined);
  }
}

/** Best effort: makes a folder's entries (a rename, a new file) durable. */
export function fsyncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Windows cannot open folders; some file systems refuse fsync on them. The data itself is synced.
  } finally {
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {}
    }
  }
}

/** The pid of the process that was writing `name` when it is a temporary file of `writeFileAtomic`, else `null`. */
export function atomicTempOwner(name: string): number | null {
  const match = /^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$/.exec(name);
  return match === null ? null : Number(match[1]);
}
