import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { WorkflowError } from "@icode/workflow-errors";
import { nodeCrypto } from "../crypto";
import { canonicalJson } from "../digest";
import { ownerOf } from "../options";
import { describeFsError, errnoCode } from "../problem";
import { ownershipProblem } from "../safety";
import { trustDir, trustRecordPath } from "./paths";
import { type TrustRecord, type TrustRecordInput, TrustRecordSchema } from "./record";

const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);
/** Leftovers of writers that died between writing and renaming are removed after this long. */
const STALE_TEMP_MS = 10 * 60 * 1000;
/** A trust record is a few hundred bytes; anything this large is not one. */
const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * The saved confirmation for the workflow whose entry file is `entryPath`, or `null` when there is none
 * that can be used: missing, unreadable, not valid, saved for another path, a link, or a file other users
 * can change (the same ownership rule as workflow files; pass `uid: null` to skip it). Failing closed means
 * the user is asked to confirm again, never that an unchecked workflow runs.
 */
export async function readTrust(
  chrysHome: string,
  entryPath: string,
  options: { uid?: number | null; gid?: number | null } = {},
): Promise<TrustRecord | null> {
  const file = trustRecordPath(chrysHome, entryPath);
  let text: string;
  try {
    const handle = await open(file, READ_FLAGS);
    try {
      const st = await handle.stat();
      if (!st.isFile() || st.size > MAX_RECORD_BYTES) return null;
      if (ownershipProblem(file, st, ownerOf(options), "source_unreadable") !== null) return null;
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = TrustRecordSchema.safeParse(json);
  if (!parsed.success || parsed.data.path !== path.resolve(entryPath)) return null;
  return parsed.data;
}

/**
 * Saves a confirmation, replacing any earlier one for the same entry path. The record is written to a
 * temporary file in the same folder, flushed to disk, then renamed over the old one, so a reader sees the
 * old record or the new one and never a torn file, even when the writer is killed; two writers at once
 * leave one of their records. Throws a `WorkflowError` with code `trust_write_failed` when it cannot save.
 *
 * @returns the record as saved (with `version` and `trusted_at` filled in)
 */
export async function writeTrust(chrysHome: string, input: TrustRecordInput): Promise<TrustRecord> {
  const record = TrustRecordSchema.parse({ ...input, path: path.resolve(input.path) });
  const dir = trustDir(chrysHome);
  const final = trustRecordPath(chrysHome, record.path);
  const temp = path.join(
    dir,
    `.${path.basename(final)}.${process.pid}.${nodeCrypto().randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(`${canonicalJson(record)}\n`, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameWithRetry(temp, final);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new WorkflowError(
      "trust_write_failed",
      `Cannot save the trust confirmation ${final}: ${describeFsError(error)}.`,
      {
        hint: `Check that you can write to ${dir}.`,
        cause: error,
      },
    );
  }
  await syncDir(dir);
  await removeStaleTemps(dir);
  return record;
}

/** Windows refuses to replace a file another process has open for a moment; POSIX never does. */
async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (error) {
      const code = errnoCode(error);
      if (attempt >= 10 || (code !== "EPERM" && code !== "EACCES" && code !== "EBUSY")) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * 10));
    }
  }
}

/** Makes the rename itself durable. Not possible (nor needed) on Windows. */
async function syncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  try {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Durability of the directory entry is best effort; the record itself is complete either way.
  }
}

async function removeStaleTemps(dir: string): Promise<void> {
  try {
    const now = Date.now();
    for (const name of await readdir(dir)) {
      if (!name.startsWith(".") || !name.endsWith(".tmp")) continue;
      const file = path.join(dir, name);
      const st = await lstat(file).catch(() => null);
      if (st !== null && now - st.mtimeMs > STALE_TEMP_MS) await unlink(file).catch(() => undefined);
    }
  } catch {
    // Cleaning up is best effort.
  }
}
