import { join } from "node:path";
import { type SpawnedWorker, spawnWorker } from "@icode/python-bridge";
import { defaultInterpreter, knownLaunch } from "@icode/script-metadata";
import { type EngineOptions, engineContext } from "../context";

// Loads no zod and none of the run or validation machinery (the CLI bundles it on its own, as `prestart.js`,
// and loads it before the command): keep the imports of this module (and
// `knownLaunch` of @icode/script-metadata) that way.

/** A validation's worker, started by `prestartValidation` before the rest of the engine was loaded. */
export interface PrestartedValidation {
  /** The default interpreter it was started for, as the interpreter resolution names it. */
  readonly interpreter: string;
  readonly process: SpawnedWorker;
}

/**
 * Starts the worker that `validateWorkflowFor(path, engine, { prestarted })` (or an engine's `validate`) with
 * the same `engine` options would start first: the default interpreter's, in load-only mode. Python then
 * starts while the caller loads and compiles the engine, which a cold `icode workflow validate` otherwise
 * waits for before Python even begins (~25 ms on a small machine). The validation adopts the process when the
 * workflow uses the default interpreter, and ends it otherwise; a caller that does not validate after all
 * calls `process.discard()` (until adopted it does not keep Node running, so forgetting costs no hang).
 *
 * Returns `null`, starting nothing, when that needs more than a few synchronous reads: no default interpreter
 * (the validation reports why), or a pyenv shim not yet probed (see `launchFor` of
 * @icode/script-metadata). Runs no workflow code.
 */
export function prestartValidation(engine: EngineOptions): PrestartedValidation | null {
  const ctx = engineContext(engine);
  const chosen = defaultInterpreter({ env: ctx.env });
  if (!chosen.ok) return null;
  const interpreter = chosen.interpreter.command;
  const launch = knownLaunch(interpreter, {
    env: ctx.env,
    cwd: ctx.cwd,
    cacheDir: interpretersCacheDir(ctx.chrysHome),
  });
  if (launch === null) return null;
  try {
    const process = spawnWorker({
      python: launch.command,
      cwd: ctx.cwd,
      cacheDir: ctx.pycacheDir,
      env: launch.env,
      loadOnly: true,
    });
    return { interpreter, process };
  } catch {
    return null; // the validation starts it again and reports the failure
  }
}

/** `<CHRYS_HOME>/cache/interpreters`: where `launchFor` keeps what pyenv shims run. */
export function interpretersCacheDir(chrysHome: string): string {
  return join(chrysHome, "cache", "interpreters");
}
