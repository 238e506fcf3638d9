import { StringDecoder } from "node:string_decoder";
import { execa } from "execa";

/** Characters of a command's output kept at most: the first two thirds and the last third of it. */
export const PROCESS_MAX_OUTPUT_CHARS = 30_000;
/** After SIGTERM, how long a timed-out or cancelled process has before SIGKILL. */
export const PROCESS_KILL_GRACE_MS = 2000;
/** After the process exits, how long to wait for output a background child keeps writing. */
const OUTPUT_DRAIN_MS = 100;

export interface ProcessRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  /** The whole environment of the process (nothing is inherited). */
  env: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputChars?: number;
}

export type ProcessResult =
  | {
      status: "exited" | "killed" | "timed_out" | "cancelled";
      /** The exit code, or null when a signal ended it. */
      exitCode: number | null;
      signal: string | null;
      /** stdout and stderr as they arrived, cut in the middle when longer than the limit. */
      output: string;
      /** Characters left out of `output`. */
      omitted: number;
    }
  | { status: "spawn_failed"; message: string };

/** Keeps the head and the tail of a long text stream, counting what falls between. */
class OutputCollector {
  private head = "";
  private tail = "";
  private total = 0;
  constructor(private readonly max: number) {}
  private get headMax(): number {
    return Math.ceil((this.max * 2) / 3);
  }
  add(text: string): void {
    this.total += text.length;
    const room = this.headMax - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (text === "") return;
    this.tail += text;
    const tailMax = this.max - this.headMax;
    if (this.tail.length > tailMax * 2) this.tail = this.tail.slice(-tailMax);
  }
  result(): { output: string; omitted: number } {
    const tailMax = this.max - this.headMax;
    const tail = this.tail.slice(-tailMax);
    const omitted = this.total - this.head.length - tail.length;
    if (omitted <= 0) return { output: this.head + tail, omitted: 0 };
    return { output: `${this.head}\n[… ${omitted} characters of output left out …]\n${tail}`, omitted };
  }
}

/**
 * Runs one program through execa with a clean environment (exactly `env`), no stdin, stdout and stderr
 * merged and bounded, in its own process group on POSIX so that a timeout or a cancel (`signal`) ends
 * everything it started: SIGTERM to the group, SIGKILL after a grace period. `running` (when given) holds
 * a stop function while the process runs, for a toolset's `close()`: it ends the process like a cancel
 * and resolves once it has ended. Never throws.
 */
export function runProcess(
  request: ProcessRequest,
  running?: Set<() => Promise<void>>,
): Promise<ProcessResult> {
  const posix = process.platform !== "win32";
  const collector = new OutputCollector(request.maxOutputChars ?? PROCESS_MAX_OUTPUT_CHARS);
  const done = new Promise<ProcessResult>((resolve) => {
    if (request.signal.aborted) {
      resolve({ status: "cancelled", exitCode: null, signal: null, output: "", omitted: 0 });
      return;
    }
    const child = execa(request.file, [...request.args], {
      cwd: request.cwd,
      env: request.env as Record<string, string>,
      extendEnv: false,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
      detached: posix,
      windowsHide: true,
    });
    let ending: "timed_out" | "cancelled" | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const signalAll = (signal: NodeJS.Signals) => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {}
    };
    const stop = (why: "timed_out" | "cancelled") => {
      if (ending !== null || settled) return;
      ending = why;
      signalAll("SIGTERM");
      killTimer = setTimeout(() => signalAll("SIGKILL"), PROCESS_KILL_GRACE_MS);
    };
    const onAbort = () => stop("cancelled");
    const stopFromClose = async () => {
      stop("cancelled");
      await done;
    };
    const timer = setTimeout(() => stop("timed_out"), request.timeoutMs);
    request.signal.addEventListener("abort", onAbort, { once: true });
    running?.add(stopFromClose);
    const settle = (result: ProcessResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer !== undefined) clearTimeout(killTimer);
      request.signal.removeEventListener("abort", onAbort);
      running?.delete(stopFromClose);
      resolve(result);
    };
    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder("utf8");
      stream?.on("data", (chunk: Buffer | string) =>
        collector.add(typeof chunk === "string" ? chunk : decoder.write(chunk)),
      );
      stream?.on("error", () => {});
    }
    let spawned = false;
    child.on("spawn", () => {
      spawned = true;
    });
    child.on("exit", (code, signal) => {
      const finish = () => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        if (posix && ending !== null) signalAll("SIGKILL"); // what is left of the group
        const status = ending ?? (signal !== null ? "killed" : "exited");
        settle({ status, exitCode: code, signal, ...collector.result() });
      };
      let drained = false;
      const wait = setTimeout(() => {
        drained = true;
        finish();
      }, OUTPUT_DRAIN_MS);
      child.on("close", () => {
        if (drained) return;
        clearTimeout(wait);
        finish();
      });
    });
    void child.then((result) => {
      if (spawned || settled) return;
      settle({
        status: "spawn_failed",
        message: result.originalMessage ?? result.shortMessage ?? `could not start ${request.file}`,
      });
    });
  });
  return done;
}

/** How a finished process reads for the model: its status line, then its output. */
export function describeProcess(
  result: Exclude<ProcessResult, { status: "spawn_failed" }>,
  timeoutMs: number,
): string {
  const head =
    result.status === "timed_out"
      ? `timed out after ${timeoutMs / 1000} s and was killed`
      : result.status === "cancelled"
        ? "was cancelled and killed"
        : result.status === "killed"
          ? `was killed by ${result.signal}`
          : `exit code ${result.exitCode}`;
  return result.output === "" ? `${head} (no output)` : `${head}\n${result.output}`;
}
