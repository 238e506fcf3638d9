import { readFileSync } from "node:fs";

/**
 * A marker that tells two processes with the same pid apart: on Linux, the boot ID plus the process start
 * time in clock ticks since boot (`/proc/<pid>/stat` field 22), e.g. `"9f1c…:482913"`. `null` where it
 * cannot be read (another OS, no `/proc`, the process is gone); callers then compare pids only.
 */
export function processStartMarker(pid: number): string | null {
  if (process.platform !== "linux" || !Number.isInteger(pid) || pid <= 0) return null;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Field 2 (comm) is in parentheses and may itself hold spaces and parentheses: split after the last ")".
  const close = stat.lastIndexOf(")");
  if (close < 0) return null;
  const fields = stat.slice(close + 2).split(" ");
  // fields[0] is field 3 (state), so field 22 (starttime) is fields[19].
  const start = fields[19];
  if (start === undefined || !/^\d+$/.test(start)) return null;
  return `${bootId()}:${start}`;
}

let cachedBootId: string | undefined;

function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      cachedBootId = "";
    }
  }
  return cachedBootId;
}

/**
 * Whether a process with this pid is running: `process.kill(pid, 0)` succeeds, or fails only because we may
 * not signal it (`EPERM`: it exists, owned by someone else). On Linux a zombie (dead, not yet reaped by its
 * parent, as happens under a container init that does not reap) does not count as running.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const state = processState(pid);
  return state !== "Z" && state !== "X";
}

/** Field 3 of `/proc/<pid>/stat` (`R`, `S`, `Z`, …), or `null` where unknown. */
function processState(pid: number): string | null {
  if (process.platform !== "linux") return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) || null;
  } catch {
    return null;
  }
}

/**
 * Whether the process that wrote a run header still runs that run: its pid is alive and, where start
 * markers can be read, it is the same process (not a later one that got the pid). Where nothing tells
 * them apart, a live pid counts as the run's.
 */
export function runProcessAlive(
  header: { pid: number; process_start: string | null },
  options: { isAlive?: (pid: number) => boolean; startMarker?: (pid: number) => string | null } = {},
): boolean {
  const alive = options.isAlive ?? isProcessAlive;
  if (!alive(header.pid)) return false;
  if (header.process_start === null) return true;
  const now = (options.startMarker ?? processStartMarker)(header.pid);
  return now === null || now === header.process_start;
}
