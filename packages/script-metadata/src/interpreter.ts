import { accessSync, constants, lstatSync, readlinkSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import { preview } from "./lines";
import type { MetadataSites, ResolvedInterpreter, SourcePosition } from "./schema";

/**
 * Choosing the interpreter to start. A workflow's `[tool.chrys] python` names a virtual environment folder or
 * an executable; it is resolved against the workflow's folder and never looked up on `PATH`. Without it, the
 * default is `ICODE_PYTHON` when set, else `python3` on `PATH`. The result is an absolute path to spawn
 * directly; symbolic links are kept (a venv's `bin/python` links to a base interpreter that does not know the
 * venv).
 */

/** Environment variables, as `process.env`. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Finds a command name on `PATH`; returns its absolute path or `null`. */
export type PathLookup = (name: string) => string | null;

/** Either an interpreter to start, or `environment_invalid` errors (stage `environment`) saying why there is none. */
export type InterpreterResolution =
  | { ok: true; interpreter: ResolvedInterpreter; diagnostics: [] }
  | { ok: false; interpreter: null; diagnostics: Diagnostic[] };

export interface ResolvePythonOptions {
  /** `[tool.chrys] python` as written (`ScriptMetadata.python`), or `null` for the default interpreter. */
  python: string | null;
  /** Absolute folder relative paths are resolved against: a single file's folder, or the workflow folder. */
  baseDir: string;
  /** For the default interpreter (`ICODE_PYTHON`, `PATH`) and for hints; defaults to `process.env`. */
  env?: Env;
  /** Defaults to `process.platform`; decides the venv layout and whether execute permission is checked. */
  platform?: NodeJS.Platform;
  /** What a leading `~` expands to; defaults to `os.homedir()`. */
  home?: string;
  /** Overrides the `PATH` search (defaults to `findExecutableOnPath` over `env`). */
  pathLookup?: PathLookup;
  /** From `parseScriptMetadata`, so diagnostics point at the `python = …` line. */
  sites?: MetadataSites | null;
  /** The workflow file for diagnostics when `sites` is not given. */
  file?: string | null;
}

export interface DefaultInterpreterOptions {
  env: Env;
  platform?: NodeJS.Platform;
  pathLookup?: PathLookup;
  /** The workflow file the diagnostics concern, if any. */
  file?: string | null;
}

/**
 * The interpreter a workflow runs with: its `[tool.chrys] python`, resolved against `baseDir`, or the default
 * interpreter when it sets none.
 */
export function resolvePythonSetting(options: ResolvePythonOptions): InterpreterResolution {
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const file = options.sites?.file ?? options.file ?? null;
  if (options.python === null) {
    return defaultInterpreter({ env, platform, pathLookup: options.pathLookup, file });
  }
  if (!path.isAbsolute(options.baseDir)) {
    throw new TypeError(
      `resolvePythonSetting: baseDir must be an absolute path, got ${preview(options.baseDir)}`,
    );
  }

  const declared = options.python;
  const subject = `[tool.chrys] python ${preview(declared)}`;
  const position: Partial<SourcePosition> = options.sites?.python ?? {};
  const fail = (message: string, hint: string): InterpreterResolution => ({
    ok: false,
    interpreter: null,
    diagnostics: [
      diagnostic({ code: "environment_invalid", stage: "environment", message, hint, file, ...position }),
    ],
  });

  const home = options.home ?? homedir();
  let written = declared;
  if (declared === "~" || declared.startsWith("~/") || (platform === "win32" && declared.startsWith("~\\"))) {
    if (home === "") {
      return fail(`${subject} starts with "~" but the home folder is unknown`, "write the path without ~");
    }
    written = path.join(home, declared.slice(2));
  } else if (declared.startsWith("~")) {
    return fail(
      `${subject} starts with "~" followed by a name: only "~" and "~/" (your own home folder) are expanded`,
      "write the absolute path of the other user's folder",
    );
  }

  const target = path.resolve(options.baseDir, written);
  const resolved = resolveTarget(target, platform);
  if (resolved.ok) {
    return {
      ok: true,
      interpreter: { kind: "user", command: resolved.command, declared, origin: "tool.chrys.python" },
      diagnostics: [],
    };
  }
  const relative = !path.isAbsolute(written);
  const where = relative
    ? ` (relative paths are resolved against ${options.baseDir}, the workflow's folder)`
    : "";
  const failure = resolved.failure;
  if (failure.kind === "missing") {
    const bareName = !/[\\/]/.test(declared) && declared !== "~";
    const onPath = bareName ? lookup(options.pathLookup, env, platform)(declared) : null;
    return fail(
      `${subject} does not exist: nothing at ${failure.path}${where}`,
      onPath !== null
        ? `iCode does not search PATH for commands: write the absolute path, python = ${JSON.stringify(onPath)}`
        : `create the virtual environment there (python3 -m venv ${failure.path}, or uv venv ${failure.path}) or correct the path`,
    );
  }
  return fail(describeFailure(subject, failure) + where, failureHint(failure, platform));
}

/**
 * The interpreter for workflows that set no `[tool.chrys] python`: `ICODE_PYTHON` when set and not empty
 * (an absolute path to an executable or a virtual environment folder, or a command name looked up on `PATH`),
 * else `python3` on `PATH` (on Windows, where python.org installers provide no `python3.exe`, then `python`).
 */
export function defaultInterpreter(options: DefaultInterpreterOptions): InterpreterResolution {
  const platform = options.platform ?? process.platform;
  const find = lookup(options.pathLookup, options.env, platform);
  const fail = (message: string, hint: string): InterpreterResolution => ({
    ok: false,
    interpreter: null,
    diagnostics: [
      diagnostic({
        code: "environment_invalid",
        stage: "environment",
        message,
        hint,
        file: options.file ?? null,
      }),
    ],
  });
  const found = (command: string, origin: "ICODE_PYTHON" | "PATH"): InterpreterResolution => ({
    ok: true,
    interpreter: { kind: "default", command, declared: null, origin },
    diagnostics: [],
  });

  const configured = options.env["ICODE_PYTHON"];
  if (configured !== undefined && configured !== "") {
    const subject = `ICODE_PYTHON ${preview(configured)}`;
    const hasSeparator = configured.includes("/") || (platform === "win32" && configured.includes("\\"));
    if (!hasSeparator) {
      const command = find(configured);
      if (command !== null) return found(command, "ICODE_PYTHON");
      return fail(
        `${subject} names a command that is not on PATH`,
        "set ICODE_PYTHON to the absolute path of a Python executable or virtual environment, or add its folder to PATH",
      );
    }
    if (!path.isAbsolute(configured)) {
      return fail(
        `${subject} is a relative path: ICODE_PYTHON must be an absolute path or a command name`,
        'write the absolute path, such as ICODE_PYTHON="$PWD/.venv"',
      );
    }
    const resolved = resolveTarget(path.normalize(configured), platform);
    if (resolved.ok) return found(resolved.command, "ICODE_PYTHON");
    const failure = resolved.failure;
    if (failure.kind === "missing") {
      return fail(`${subject} does not exist`, "correct ICODE_PYTHON, or unset it to use python3 on PATH");
    }
    return fail(describeFailure(subject, failure), failureHint(failure, platform));
  }

  const names = platform === "win32" ? ["python3", "python"] : ["python3"];
  for (const name of names) {
    const command = find(name);
    if (command !== null) return found(command, "PATH");
  }
  return fail(
    `no Python interpreter found: ${names.join(" and ")} ${names.length === 1 ? "is" : "are"} not on PATH and ICODE_PYTHON is not set`,
    "install Python 3.9 or later, set ICODE_PYTHON to its path, or set [tool.chrys] python in the workflow",
  );
}

/**
 * Searches `PATH` (from `env`) for an executable named `name`, as a shell would, but only in absolute folders
 * (an empty or relative entry would depend on the current folder). On Windows the entries are separated by
 * `;`, the variable's name is matched without regard to case, and only `name.exe` is looked for, because
 * `.bat` and `.cmd` files cannot be spawned without a shell.
 */
export function findExecutableOnPath(
  name: string,
  options: { env: Env; platform?: NodeJS.Platform },
): string | null {
  const platform = options.platform ?? process.platform;
  const value = readEnv(options.env, "PATH", platform);
  if (value === undefined || value === "" || name === "") return null;
  const names =
    platform === "win32" ? (name.toLowerCase().endsWith(".exe") ? [name] : [`${name}.exe`]) : [name];
  for (let folder of value.split(platform === "win32" ? ";" : ":")) {
    if (platform === "win32") folder = folder.replace(/^"(.*)"$/, "$1");
    if (folder === "" || !path.isAbsolute(folder)) continue;
    for (const candidate of names) {
      const file = path.join(folder, candidate);
      if (inspect(file, platform).kind === "executable") return file;
    }
  }
  return null;
}

function lookup(custom: PathLookup | undefined, env: Env, platform: NodeJS.Platform): PathLookup {
  return custom ?? ((name) => findExecutableOnPath(name, { env, platform }));
}

function readEnv(env: Env, name: string, platform: NodeJS.Platform): string | undefined {
  if (platform !== "win32") return env[name];
  const key = Object.keys(env).find((candidate) => candidate.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

type Inspection =
  | { kind: "executable" }
  | { kind: "missing" }
  | { kind: "directory" }
  | { kind: "broken_link"; target: string }
  | { kind: "not_executable" }
  | { kind: "not_regular" }
  | { kind: "inaccessible"; reason: string };

type Failure = Exclude<Inspection, { kind: "executable" } | { kind: "directory" }> & { path: string };

type TargetResolution =
  | { ok: true; command: string }
  | { ok: false; failure: Failure | { kind: "no_interpreter"; path: string; tried: string[] } };

/** What is at `file`, following links, and whether the current user may execute it. */
function inspect(file: string, platform: NodeJS.Platform): Inspection {
  let link: ReturnType<typeof lstatSync>;
  try {
    link = lstatSync(file, { throwIfNoEntry: false });
  } catch (error) {
    const code = errorCode(error);
    return code === "ENOTDIR" || code === "ENAMETOOLONG"
      ? { kind: "missing" }
      : { kind: "inaccessible", reason: code };
  }
  if (link === undefined) return { kind: "missing" };
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(file);
  } catch (error) {
    if (link.isSymbolicLink()) return { kind: "broken_link", target: readLink(file) };
    return { kind: "inaccessible", reason: errorCode(error) };
  }
  if (stat.isDirectory()) return { kind: "directory" };
  if (!stat.isFile()) return { kind: "not_regular" };
  if (platform === "win32") return { kind: "executable" };
  try {
    accessSync(file, constants.X_OK);
    return { kind: "executable" };
  } catch {
    return { kind: "not_executable" };
  }
}

/** The interpreters a folder may hold: a virtual environment's, or (Windows) a base install's or conda's. */
function folderCandidates(folder: string, platform: NodeJS.Platform): string[] {
  return platform === "win32"
    ? [path.join(folder, "Scripts", "python.exe"), path.join(folder, "python.exe")]
    : [path.join(folder, "bin", "python"), path.join(folder, "bin", "python3")];
}

/** An executable file as is, or a folder's interpreter; otherwise what is wrong with it. */
function resolveTarget(target: string, platform: NodeJS.Platform): TargetResolution {
  const found = inspect(target, platform);
  if (found.kind === "executable") return { ok: true, command: target };
  if (found.kind !== "directory") return { ok: false, failure: { ...found, path: target } };

  const candidates = folderCandidates(target, platform);
  const inspections = candidates.map((candidate) => ({ candidate, found: inspect(candidate, platform) }));
  const usable = inspections.find((entry) => entry.found.kind === "executable");
  if (usable !== undefined) return { ok: true, command: usable.candidate };
  const broken = inspections.find(
    (entry) => entry.found.kind !== "missing" && entry.found.kind !== "directory",
  );
  if (broken !== undefined && broken.found.kind !== "executable" && broken.found.kind !== "directory") {
    return { ok: false, failure: { ...broken.found, path: broken.candidate } };
  }
  return { ok: false, failure: { kind: "no_interpreter", path: target, tried: candidates } };
}

function describeFailure(
  subject: string,
  failure: Exclude<Extract<TargetResolution, { ok: false }>["failure"], { kind: "missing" }>,
): string {
  switch (failure.kind) {
    case "no_interpreter":
      return `${subject} is a folder without a Python interpreter: neither ${failure.tried.join(" nor ")} exists`;
    case "broken_link":
      return `${subject} cannot start: ${failure.path} is a link to ${failure.target}, which does not exist`;
    case "not_executable":
      return `${subject} cannot start: ${failure.path} is a file without execute permission`;
    case "not_regular":
      return `${subject} cannot start: ${failure.path} is not a regular file`;
    case "inaccessible":
      return `${subject} cannot be examined: ${failure.path} gives ${failure.reason}`;
  }
}

function failureHint(
  failure: Exclude<Extract<TargetResolution, { ok: false }>["failure"], { kind: "missing" }>,
  platform: NodeJS.Platform,
): string {
  switch (failure.kind) {
    case "no_interpreter":
      return `point it at a virtual environment (a folder with ${platform === "win32" ? "Scripts\\python.exe" : "bin/python"}) or at a Python executable; create one with python3 -m venv or uv venv`;
    case "broken_link":
      return "the Python this environment was created from was moved or removed: recreate the environment (python3 -m venv --clear <folder>, or uv venv)";
    case "not_executable":
      return `point it at the Python interpreter itself, or make the file executable (chmod +x ${failure.path})`;
    case "not_regular":
      return "point it at a virtual environment folder or a Python executable";
    case "inaccessible":
      return "check the permissions of the folders on the way to it";
  }
}

function readLink(file: string): string {
  try {
    return readlinkSync(file);
  } catch {
    return "(unreadable link)";
  }
}

function errorCode(error: unknown): string {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : "an unknown error";
}
