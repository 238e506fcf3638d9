import type { Readable, Writable } from "node:stream";
import { execa, type ResultPromise } from "execa";
import { AcpFailure } from "./failure";
import type { AcpLaunch } from "./launch";
import type { StderrTail } from "./stderr-tail";

type Subprocess = ResultPromise<{
  stdin: "pipe";
  stdout: "pipe";
  stderr: "pipe";
  buffer: false;
  reject: false;
}>;

/** How the process ended: its exit code or signal. */
export type ProcessExit = { code: number | null; signal: string | null };

/** Process groups of live agents, killed if the engine's process exits first (execa's `cleanup` does not
 * apply to detached children). */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const pid of liveGroups) killGroup(pid, "SIGKILL");
  });
}

function delay(ms: number): Promise<"timeout"> {
  return new Promise((resolve) => setTimeout(() => resolve("timeout"), ms).unref());
}

/**
 * One ACP agent process: started with a clean environment through execa, its stdio piped (stdin and stdout
 * carry ACP, stderr is kept in a bounded tail). On POSIX it leads its own process group, so that stopping
 * it also ends what it started.
 */
export class AgentProcess {
  readonly exited: Promise<ProcessExit>;
  private exit: ProcessExit | null = null;
  private readonly group: boolean;

  private constructor(
    private readonly child: Subprocess,
    stderr: StderrTail,
    readonly pid: number,
  ) {
    this.group = process.platform !== "win32";
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.stdin.on("error", () => {
      // EPIPE once the agent is gone: the connection reports the loss.
    });
    this.exited = child.then((result) => {
      this.exit = { code: result.exitCode ?? null, signal: result.signal ?? null };
      liveGroups.delete(pid);
      if (this.group) killGroup(pid, "SIGTERM");
      return this.exit;
    });
    if (this.group) {
      liveGroups.add(pid);
      installExitHook();
    }
  }

  /**
   * Starts the agent, its stderr going to `stderr`; a program that cannot be started (not found, not
   * executable) is `acp_start_failed`.
   */
  static async start(launch: AcpLaunch, options: { stderr: StderrTail }): Promise<AgentProcess> {
    const child: Subprocess = execa(launch.command, [...launch.args], {
      cwd: launch.cwd,
      env: { ...launch.env },
      extendEnv: false,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      buffer: false,
      reject: false,
      detached: process.platform !== "win32",
      windowsHide: true,
      forceKillAfterDelay: false,
    });
    const started = await new Promise<{ ok: true } | { ok: false; error: Error }>((resolve) => {
      child.once("spawn", () => resolve({ ok: true }));
      child.once("error", (error) => resolve({ ok: false, error }));
    });
    if (!started.ok || child.pid === undefined) {
      await child;
      const error = started.ok ? new Error("no process id") : started.error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new AcpFailure(
        "acp_start_failed",
        `cannot start the ACP agent ${JSON.stringify(launch.command)}: ${code === "ENOENT" ? "no such program on PATH" : error.message}`,
        {
          hint:
            code === "ENOENT"
              ? `install it, or set acp.command to its full path (PATH is ${launch.env["PATH"] ?? "unset"})`
              : "check acp.command and its permissions",
          cause: error,
        },
      );
    }
    return new AgentProcess(child, options.stderr, child.pid);
  }

  get stdin(): Writable {
    return this.child.stdin;
  }

  get stdout(): Readable {
    return this.child.stdout;
  }

  /** The exit, once the process has ended, else null. */
  get exitStatus(): ProcessExit | null {
    return this.exit;
  }

  private signal(signal: NodeJS.Signals): void {
    if (this.group) killGroup(this.pid, signal);
    else this.child.kill(signal);
  }

  /**
   * Ends the process: closes its stdin (an ACP agent exits when it does), waits `graceMs`, then sends
   * SIGTERM, waits `graceMs` again, then SIGKILL; resolves once it has exited.
   */
  async stop(graceMs: number): Promise<ProcessExit> {
    if (this.exit) return this.exit;
    this.child.stdin.end();
    if ((await Promise.race([this.exited, delay(graceMs)])) !== "timeout") return this.exited;
    this.signal("SIGTERM");
    if ((await Promise.race([this.exited, delay(graceMs)])) !== "timeout") return this.exited;
    this.signal("SIGKILL");
    return this.exited;
  }
}
