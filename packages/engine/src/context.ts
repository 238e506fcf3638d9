import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NodeExecutor } from "@icode/pipelines";
import type { WorkerWarning } from "@icode/python-bridge";
import { configDir } from "@icode/workflow-discovery";
import type { RecordStore } from "@icode/workflow-records";

/** Everything the engine takes from its host process, passed in once: a library never reads globals. */
export interface EngineOptions {
  /** The current working directory: project workflows are found in `<cwd>/.chrys/workflows/`. */
  cwd: string;
  /** Environment variables (`CHRYS_HOME`, `ICODE_PYTHON`, `PATH`, …). */
  env: Record<string, string | undefined>;
  /** Overrides the configuration directory (else `CHRYS_HOME`, else `~/.chrys`). */
  chrysHome?: string;
  /** Overrides the folder of built-in workflows shipped with the engine. */
  builtinDir?: string;
  /** The user ID owning workflow files may have (defaults to the process's). */
  uid?: number;
  /** The user's home folder (`~` in profile paths, `~/.agents/skills`); defaults to the process's. */
  homeDir?: string;
  /** Where runs are recorded (default: the file store under `<chrysHome>/sessions/`). */
  store?: RecordStore;
  /** Concurrent agent attempts per run, unless a request sets its own (default 4, as the spec says). */
  maxConcurrentAgents?: number;
  /**
   * Told what the engine recovered from on its own and a person should hear about, such as a damaged
   * bytecode cache that was cleared (`bytecode_cache_reset`), outside a run (validate, preview); the CLI
   * prints it on stderr. In a run the same warning is a `warning` event of the run.
   */
  onWarning?: (warning: WorkerWarning) => void;
  /**
   * Runs the agent attempts of pipeline nodes (`engine.pipelines.drive`). Default: the agent executor of
   * `@icode/workflow-agents/pipeline` on this computer's profiles, made on first use and closed by
   * `engine.close()`; one given here is its owner's to close.
   */
  pipelineExecutor?: NodeExecutor;
}

export interface EngineContext {
  cwd: string;
  env: Record<string, string | undefined>;
  chrysHome: string;
  builtinDir: string;
  uid: number | null;
  /** Where Python keeps compiled files of workflows (`PYTHONPYCACHEPREFIX`). */
  pycacheDir: string;
  homeDir: string;
  onWarning: ((warning: WorkerWarning) => void) | undefined;
}

/** The built-in workflows ship inside this package, next to `dist/`. */
function defaultBuiltinDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "builtin");
}

/**
 * What running needs on top of `EngineContext`: the record store and the run limits. Kept apart because
 * listing and validating (one process each in the CLI) must not load the records package.
 */
export interface RunContext extends EngineContext {
  store: RecordStore;
  maxConcurrentAgents: number | undefined;
}

export function engineContext(options: EngineOptions): EngineContext {
  const chrysHome = options.chrysHome ?? configDir(options.env, homedir(), process.platform);
  return {
    cwd: options.cwd,
    env: options.env,
    chrysHome,
    builtinDir: options.builtinDir ?? defaultBuiltinDir(),
    uid: options.uid ?? process.getuid?.() ?? null,
    pycacheDir: join(chrysHome, "cache", "pycache"),
    homeDir: options.homeDir ?? homedir(),
    onWarning: options.onWarning,
  };
}
