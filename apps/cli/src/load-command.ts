import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import type { Command } from "./command";
import type { BundleName } from "./command-line/spec";

/** The command modules as sources: what runs before the build (tests, typecheck). */
const SOURCES: Record<BundleName, () => Promise<{ command: Command }>> = {
  "workflow-list": () => import("./commands/workflow-list"),
  "workflow-validate": () => import("./commands/workflow-validate"),
  "workflow-run": () => import("./commands/workflow-run"),
  "trajectory-export": () => import("./commands/trajectory-export"),
  history: () => import("./commands/history"),
  pipeline: () => import("./commands/pipeline"),
  "pipeline-run": () => import("./commands/pipeline-run"),
  completion: () => import("./commands/completion"),
  profiles: () => import("./commands/profiles"),
};

/**
 * Loads one command. In the build each command is a CommonJS bundle of its own (`dist/<name>.js`, see
 * tsup.config.ts), compiled with V8's code cache: parsing and compiling a bundle that holds zod and the
 * engine costs ~35 ms of every cold `icode workflow validate`, about a third of that with the cache. (Node 22
 * does this itself with `module.enableCompileCache()`; the CLI supports Node 20.) The cache lives beside
 * `dist/` in `.cache/`, as trusted as the bundles next to it; V8 rejects data made from another source or
 * another V8, and the file is then written again. Where it cannot be written (a read-only install) the
 * command still runs, only compiled from scratch.
 */
export async function loadCommand(name: BundleName): Promise<Command> {
  const here = dirname(fileURLToPath(import.meta.url));
  const bundle = join(here, `${name}.js`);
  if (!existsSync(bundle)) return (await SOURCES[name]()).command;
  const cacheFile = join(here, "..", ".cache", "v8", `${name}.bin`);
  const cachedData = readCache(cacheFile, statSync(bundle).uid);
  const source = readFileSync(bundle, "utf8");
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const module = { exports: {} as { command?: Command } };
  const init = script.runInThisContext() as (...args: unknown[]) => void;
  init(module.exports, createRequire(bundle), module, bundle, here);
  if (cachedData === undefined || script.cachedDataRejected === true) {
    // Made at exit, so that it also holds the functions this run compiled (most of what the command uses).
    process.once("exit", () => writeCache(script, cacheFile));
  }
  const { command } = module.exports;
  if (command === undefined) throw new Error(`${bundle} does not export a command`);
  return command;
}

/**
 * The cached data, if it belongs to the owner of the bundle and nobody else can change it: V8 checks that it
 * was made from the same source by the same V8, not who made it.
 */
function readCache(file: string, owner: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== owner || (st.mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function writeCache(script: Script, file: string): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    writeFileSync(temp, script.createCachedData(), { mode: 0o644 });
    renameSync(temp, file);
  } catch {
    // Best effort: without a cache the next run compiles from scratch.
    try {
      rmSync(temp, { force: true });
    } catch {
      // Nothing more to do.
    }
  }
}
