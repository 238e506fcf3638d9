// The benchmark's temporary folder. `pnpm bench` measures synchronously, so an interrupted run (Ctrl-C, a
// killed terminal) dies without cleaning up: its folder names the process that made it, and the next run
// removes the folders of processes that no longer exist.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PREFIX = "icode-bench-";
const OWNER = "owner.json";

/** A new temporary folder under `root`, marked with this process's ID. */
export function makeScratch(root) {
  const dir = mkdtempSync(join(root, PREFIX));
  writeFileSync(
    join(dir, OWNER),
    `${JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() })}\n`,
  );
  return dir;
}

/** Leaves `dir` in place for the user (`--keep`): without its owner mark, no later run removes it. */
export function keepScratch(dir) {
  rmSync(join(dir, OWNER), { force: true });
}

/**
 * Removes the folders under `root` that `makeScratch` made for processes that are gone, and returns their
 * paths. A folder without the mark (kept with `--keep`, or made by something else) is never touched.
 */
export function removeStaleScratch(root) {
  const removed = [];
  let names;
  try {
    names = readdirSync(root);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(root, name);
    let owner;
    try {
      owner = JSON.parse(readFileSync(join(dir, OWNER), "utf8"));
    } catch {
      continue;
    }
    if (!Number.isInteger(owner?.pid) || isAlive(owner.pid)) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM"; // it exists, as another user's process
  }
}
