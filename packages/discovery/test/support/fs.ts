import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import type { DiscoveryOptions } from "../../src/index";

const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) {
    // Restore permissions a test took away, so that the folder can be removed by a non-root user too.
    execFileSync("chmod", ["-R", "u+rwx", dir]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh temporary folder (searchable by every user, for the tests that drop privileges), removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "icode-discovery-"));
  chmodSync(dir, 0o755);
  made.push(dir);
  return dir;
}

/** A file tree entry: text or bytes for a file, `{ dir: true }` for an empty folder. */
export type TreeEntry = string | Uint8Array | { dir: true };

/**
 * Writes `tree` under `root`: keys are `/`-separated relative paths. Files get mode 0644 and folders
 * 0755 whatever the umask, so ownership checks see the same modes everywhere.
 */
export function writeTree(root: string, tree: Record<string, TreeEntry>): void {
  for (const [rel, entry] of Object.entries(tree)) {
    const abs = path.join(root, ...rel.split("/"));
    mkdirs(root, path.dirname(abs));
    if (typeof entry === "object" && "dir" in entry) {
      mkdirs(root, abs);
    } else {
      writeFileSync(abs, entry);
      chmodSync(abs, 0o644);
    }
  }
}

function mkdirs(root: string, dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  for (let d = dir; d.startsWith(root) && d.length >= first.length; d = path.dirname(d)) chmodSync(d, 0o755);
}

export function link(target: string, at: string): void {
  mkdirSync(path.dirname(at), { recursive: true });
  symlinkSync(target, at);
}

export function fifo(at: string): void {
  mkdirSync(path.dirname(at), { recursive: true });
  execFileSync("mkfifo", [at]);
}

/** A sparse file of `size` bytes: it takes no disk space, but its size counts. */
export function sparse(at: string, size: number): void {
  writeFileSync(at, "");
  chmodSync(at, 0o644);
  truncateSync(at, size);
}

export const isRoot = process.getuid?.() === 0;
/** The user the tests that need someone else use (`nobody`). */
export const OTHER_UID = 65534;

/**
 * Runs `fn` as a user who is not root, so that a `chmod 000` file really cannot be read. As root the
 * effective user ID is switched to `nobody` for the call (glibc applies it to every thread, including
 * libuv's file system pool) and switched back after; as anyone else `fn` just runs.
 */
export async function withoutRoot<T>(fn: () => Promise<T>): Promise<T> {
  if (!isRoot) return fn();
  process.seteuid!(OTHER_UID);
  try {
    return await fn();
  } finally {
    process.seteuid!(0);
  }
}

/**
 * Makes `file` belong to somebody else: as root it is given to `nobody`; otherwise the check is run as
 * a different user ID. Returns the `uid` option to pass to the function under test.
 */
export function ownedBySomeoneElse(file: string): { uid: number } {
  const me = process.getuid!();
  if (isRoot) {
    execFileSync("chown", [String(OTHER_UID), file]);
    return { uid: me };
  }
  return { uid: me + 1 };
}

/** A project (the working directory), a configuration directory and a built-in folder, all empty. */
export function setupLocations(): DiscoveryOptions & { project: string; global: string; builtin: string } {
  const root = tempDir();
  const cwd = path.join(root, "project");
  const chrysHome = path.join(root, "home", ".chrys");
  const builtinDir = path.join(root, "builtin");
  for (const dir of [cwd, chrysHome, builtinDir]) mkdirSync(dir, { recursive: true });
  return {
    cwd,
    chrysHome,
    builtinDir,
    project: path.join(cwd, ".chrys", "workflows"),
    global: path.join(chrysHome, "workflows"),
    builtin: builtinDir,
  };
}
