import { isWorkflowError } from "@icode/workflow-errors";
import { loadHooksConfig } from "./config";
import type { Hook, HookEvent, HookFields, HookPayload, HookWarning } from "./schema";

export interface RunHooksOptions {
  /** Read hooks from `<chrysHome>/hooks.json` … */
  chrysHome?: string;
  /** … or use these (already parsed) hooks. */
  hooks?: readonly Hook[];
  /** The hooks' environment (`PATH` is needed to find programs by name). */
  env: Record<string, string | undefined>;
  /** Seconds between the polite `SIGTERM` on timeout and `SIGKILL`. Default 2. */
  killGraceSeconds?: number;
}

export interface HookRunResult {
  /** Configuration problems and what the blocking hooks reported; they have all finished. */
  warnings: HookWarning[];
  /** Settles when the non-blocking hooks have finished (each bounded by its timeout), with their warnings. */
  background: Promise<HookWarning[]>;
}

/**
 * Runs the hooks configured for `event`: each matching command is spawned in the session's working
 * directory with the event as one JSON object on stdin (`event`, `session_kind: "workflow"`, `profile: ""`
 * plus `fields`). Blocking hooks are awaited, non-blocking ones are not. Every hook is killed at its
 * `timeout_seconds`. A hook can never stop a run: failures and answers such as `{"action": "block"}` become
 * warnings, and this function never throws or rejects.
 *
 * @example
 * const { warnings } = await runHooks("workflow_run_start",
 *   { workflow_id: "demo", session_id, cwd, run_id, input_text: "" }, { chrysHome, env: process.env });
 */
export async function runHooks<E extends HookEvent>(
  event: E,
  fields: HookFields<E>,
  options: RunHooksOptions,
): Promise<HookRunResult> {
  let hooks: readonly Hook[];
  try {
    hooks =
      options.hooks ?? (options.chrysHome === undefined ? [] : loadHooksConfig(options.chrysHome).hooks);
  } catch (error) {
    const message = isWorkflowError(error) ? error.message : String(error);
    return {
      warnings: [
        { code: "hooks_config_invalid", event, hook: null, message: `Hooks were not run: ${message}` },
      ],
      background: Promise.resolve([]),
    };
  }
  const payload = { ...fields, event, session_kind: "workflow", profile: "" } as HookPayload;
  const input = JSON.stringify(payload) + "\n";
  const grace = (options.killGraceSeconds ?? 2) * 1000;
  const blocking: Promise<HookWarning[]>[] = [];
  const background: Promise<HookWarning[]>[] = [];
  hooks.forEach((hook, index) => {
    if (hook.event !== event) return;
    const done = runOne(hook, index, input, payload.cwd, options.env, grace);
    (hook.blocking ? blocking : background).push(done);
  });
  const warnings = (await Promise.all(blocking)).flat();
  return { warnings, background: Promise.all(background).then((lists) => lists.flat()) };
}

const KEEP_OUTPUT = 64 * 1024;

function display(hook: Hook): string {
  return Array.isArray(hook.command) ? hook.command.join(" ") : hook.command;
}

async function runOne(
  hook: Hook,
  index: number,
  input: string,
  cwd: string,
  env: Record<string, string | undefined>,
  graceMs: number,
): Promise<HookWarning[]> {
  const label = `hook ${index} (${hook.event}: ${display(hook)})`;
  const warn = (code: HookWarning["code"], message: string): HookWarning => ({
    code,
    event: hook.event,
    hook: index,
    message,
  });
  const failure = (code: HookWarning["code"], message: string): HookWarning[] => {
    if (hook.on_error === "ignore") return [];
    const note = hook.on_error === "block" ? ' (on_error "block" is a warning for workflow events)' : "";
    return [warn(code, message + note)];
  };
  const notStarted = (message: string) =>
    failure("hook_spawn_failed", `${label} could not start in ${cwd}: ${message}.`);

  const posix = process.platform !== "win32";
  const [file, args] = Array.isArray(hook.command)
    ? [hook.command[0]!, hook.command.slice(1)]
    : [hook.command, []];
  // Loaded with the first hook that runs: importing it costs ~85 ms, which a run without hooks should
  // not pay.
  const { execa } = await import("execa");
  const start = () =>
    execa(file, args, {
      cwd,
      env,
      extendEnv: false, // the hook gets the environment it was given, not this process's on top
      shell: !Array.isArray(hook.command),
      input, // the event; a hook that does not read it is fine (execa ignores EPIPE)
      stdout: hook.blocking ? "pipe" : "ignore",
      stderr: "pipe",
      // Read below, bounded: execa's own buffer would end a hook whose output passes maxBuffer.
      buffer: false,
      // Its own process group, so a timeout stops what a shell command started too. (execa's `cleanup`
      // does not apply to a detached process: a hook may outlive iCode, as before.)
      detached: posix,
      reject: false, // failures are results, turned into warnings below
    });
  let subprocess: ReturnType<typeof start>;
  try {
    subprocess = start();
  } catch (error) {
    return notStarted((error as Error).message);
  }
  let stdout = "";
  let stderr = "";
  subprocess.stdout?.on("data", (chunk: Buffer) => {
    if (stdout.length < KEEP_OUTPUT) stdout += chunk.toString("utf8");
  });
  subprocess.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-KEEP_OUTPUT);
  });

  // execa's `timeout` signals the hook alone; the hook contract says every process it started: our own
  // timer signals the group.
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (posix && subprocess.pid !== undefined) process.kill(-subprocess.pid, signal);
      else subprocess.kill(signal);
    } catch {}
  };
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup("SIGTERM");
    killTimer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
  }, hook.timeout_seconds * 1000);
  // Output still buffered arrives within moments of the exit; a grandchild holding the pipes open must not
  // keep us (and execa, which waits for the pipes to close) waiting, so then stop reading.
  let drainTimer: NodeJS.Timeout | undefined;
  subprocess.once("exit", () => {
    drainTimer = setTimeout(() => {
      subprocess.stdout?.destroy();
      subprocess.stderr?.destroy();
    }, 100);
  });
  const result = await subprocess;
  clearTimeout(timer);
  if (killTimer !== undefined) clearTimeout(killTimer);
  if (drainTimer !== undefined) clearTimeout(drainTimer);
  if (posix && timedOut) signalGroup("SIGKILL"); // leftovers of the group

  if (result.exitCode === undefined && result.signal === undefined) {
    // Never ran: execa names the system's error (ENOENT, EACCES, a bad cwd).
    return notStarted(result.originalMessage ?? result.code ?? "unknown error");
  }
  const tail = lastLine(stderr);
  const detail = tail === "" ? "" : `; stderr: ${tail}`;
  if (timedOut) {
    return failure(
      "hook_timeout",
      `${label} ran past its ${hook.timeout_seconds} s timeout and was killed${detail}.`,
    );
  }
  if (result.exitCode !== 0) {
    const how =
      result.signal !== undefined ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
    return failure("hook_failed", `${label} ${how}${detail}.`);
  }
  if (hook.blocking && asksToBlock(stdout)) {
    return [
      warn(
        "hook_block_ignored",
        `${label} answered {"action": "block"}; workflow hooks are for notification and recording, so the answer was ignored.`,
      ),
    ];
  }
  return [];
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  const line = lines[lines.length - 1] ?? "";
  // One line, no control characters, bounded: hook text must not forge our own output.
  return line.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ").slice(0, 300);
}

function asksToBlock(stdout: string): boolean {
  const text = stdout.trim();
  if (!text.startsWith("{")) return false;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && (value as { action?: unknown }).action === "block";
  } catch {
    return false;
  }
}
