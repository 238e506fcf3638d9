import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { WorkflowError } from "@icode/workflow-errors";
import { sdkRoot as defaultSdkRoot, workerScript } from "./sdk";

// No zod and none of the protocol here: a program can start Python with this module alone, before it loads
// the code that talks to the worker (the CLI's `validate` does, so that Python starts while the rest of the
// CLI is still being compiled), and hand the process to `adoptWorker` later. For the same reason the spawn
// is `node:child_process`, not execa: execa on this path made a cold validation ~20 ms slower (decision 0028).

/** How to start a worker process; `startWorker` takes these and more. */
export interface SpawnWorkerOptions {
  /** The interpreter to spawn, directly (no shell). Prefer the real binary (`hello.python.executable`). */
  python: string;
  /** The workspace: the worker's working directory, against which nodes resolve relative paths. */
  cwd: string;
  /** The engine's bytecode folder, passed as `PYTHONPYCACHEPREFIX`. */
  cacheDir: string;
  /** The environment of the worker (default `process.env`); `PYTHONPYCACHEPREFIX` is set on top. */
  env?: NodeJS.ProcessEnv;
  /** The folder holding `chrys/` (default `sdkRoot()`). */
  sdkRoot?: string;
  /**
   * The worker will only load a workflow and be closed (validation): it then does not prepare for calls
   * while the load result is read, which would hold up its exit. It still answers calls, preparing at the
   * first. Default `false`.
   */
  loadOnly?: boolean;
}

/**
 * A worker process that has been spawned and not yet spoken to: `adoptWorker` makes it a `PythonWorker`,
 * `discard` ends it. Until adopted it does not keep the Node process alive (its handles are unreferenced),
 * and what it writes waits for the adopter (in the pipes, and at most a stream buffer read ahead of them).
 */
export class SpawnedWorker {
  /** The spawn's failure (the child's `error` event), if it came before adoption. */
  error: Error | null = null;
  private claimed = false;

  /** @internal use `spawnWorker` */
  constructor(
    readonly child: ChildProcess,
    /** The file spawned. */
    readonly python: string,
    /** The options it was spawned with, `cwd` and `cacheDir` as absolute paths. */
    readonly options: Readonly<Required<Pick<SpawnWorkerOptions, "cwd" | "cacheDir" | "loadOnly">>>,
    /** @internal what `spawnWorker` was given, to spawn it again (see `adoptWorker`). */
    readonly spawnOptions: Readonly<SpawnWorkerOptions>,
  ) {
    // Without a listener an `error` event (such as ENOENT, emitted on the next tick) would be thrown.
    child.on("error", (error) => {
      this.error ??= error;
    });
    setReferenced(child, false);
    // When a child exits, Node resumes (and so drops the output of) every stdio stream that no one reads and
    // has no `readable` listener: a worker that failed before adoption would lose the stderr that tells why.
    for (const index of HELD_STREAMS) child.stdio[index]?.on("readable", hold);
  }

  /** @internal for `adoptWorker`: the process, held by the caller from now on. Throws when taken twice. */
  claim(): ChildProcess {
    if (this.claimed) throw new Error("this worker process was already adopted or discarded");
    this.claimed = true;
    setReferenced(this.child, true);
    for (const index of HELD_STREAMS) this.child.stdio[index]?.off("readable", hold);
    return this.child;
  }

  /** Whether `adoptWorker` or `discard` took it. */
  get taken(): boolean {
    return this.claimed;
  }

  /** Ends a worker that will not be adopted (its start was not wanted after all). Does nothing once taken. */
  discard(): void {
    if (this.claimed) return;
    this.claimed = true;
    this.child.kill("SIGKILL");
  }
}

/**
 * Spawns a worker process: `<python> <sdkRoot>/chrys/workflows/_worker.py [--load-only]`, its messages on
 * file descriptors 3 (to it) and 4 (from it). Throws `WorkflowError` code `worker_failed` when the spawn fails
 * at once; a failure Node reports later (a missing file) is kept in `error` for `adoptWorker`.
 */
export function spawnWorker(options: SpawnWorkerOptions): SpawnedWorker {
  const root = options.sdkRoot ?? defaultSdkRoot();
  const cacheDir = resolve(options.cacheDir);
  const loadOnly = options.loadOnly ?? false;
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), PYTHONPYCACHEPREFIX: cacheDir };
  // The prefix is the engine's own folder, never beside user files: compiled files are always kept there.
  // With PYTHONDONTWRITEBYTECODE set, Python would recompile the whole standard library on every start,
  // because the prefix hides the interpreter's own __pycache__ folders (≈ 0.3 s per worker).
  delete env.PYTHONDONTWRITEBYTECODE;
  let child: ChildProcess;
  try {
    child = spawn(options.python, [workerScript(root), ...(loadOnly ? ["--load-only"] : [])], {
      cwd: options.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
  } catch (error) {
    throw new WorkflowError(
      "worker_failed",
      `cannot start the Python worker ${options.python}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return new SpawnedWorker(
    child,
    options.python,
    { cwd: resolve(options.cwd), cacheDir, loadOnly },
    { ...options },
  );
}

/** The streams the worker writes to: stdout, stderr and its messages (file descriptor 4). */
const HELD_STREAMS = [1, 2, 4] as const;

/** A `readable` listener that reads nothing: the data stays buffered until `claim()` removes it. */
function hold(): void {}

/** Whether the process and its pipes keep Node's event loop alive. */
function setReferenced(child: ChildProcess, referenced: boolean): void {
  if (referenced) child.ref();
  else child.unref();
  for (const stream of child.stdio) {
    const handle = stream as { ref?: () => void; unref?: () => void } | null;
    if (referenced) handle?.ref?.();
    else handle?.unref?.();
  }
}
