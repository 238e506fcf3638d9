import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { WorkerWarning } from "@icode/python-bridge";
import { configDir } from "@icode/workflow-discovery";

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
  /**
   * Told what the engine recovered from on its own and a person should hear about, such as a damaged
   * bytecode cache that was cleared (`bytecode_cache_reset`); the CLI prints it on stderr.
   */
  onWarning?: (warning: WorkerWarning) => void;
}

export interface EngineContext {
  cwd: string;
  env: Record<string, string | undefined>;
  chrysHome: string;
  builtinDir: string;
  uid: number | null;
  /** Where Python keeps compiled files of workflows (`PYTHONPYCACHEPREFIX`). */
  pycacheDir: string;
  onWarning: ((warning: WorkerWarning) => void) | undefined;
}

/** The built-in workflows ship inside this package, next to `dist/`. */
export function defaultBuiltinDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "builtin");
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
    onWarning: options.onWarning,
  };
}
