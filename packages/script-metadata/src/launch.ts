import { createHash, randomBytes } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { mkdir, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/** How to start an interpreter: the file to spawn and its environment. */
export interface Launch {
  /** The file to spawn. */
  command: string;
  /** The environment to spawn it with. */
  env: Record<string, string | undefined>;
}

export interface LaunchOptions {
  /** The environment the interpreter would be started with. */
  env: Record<string, string | undefined>;
  /** The worker's working folder (pyenv looks for `.python-version` from there up). */
  cwd: string;
  /** `<CHRYS_HOME>/cache/interpreters`. */
  cacheDir: string;
  /** How long the probe may take; default 20 s (a cold pyenv on a loaded machine is slow). */
  probeTimeoutMs?: number;
}

/**
 * What is kept for one shim, working folder and environment. Checked by hand (`isEntry`), not with a zod
 * schema: this module also runs in the CLI's prestart bundle, before zod is loaded (the engine's
 * `prestartValidation`). Keep it free of zod.
 */
interface Entry {
  version: 1;
  shim: string;
  executable: string;
  /** Variables the shim sets (`null`: removes) before it runs `executable`. */
  envChanges: Record<string, string | null>;
  /** `path → stamp` of every file the decision depends on. */
  stamps: Record<string, string>;
}

function isEntry(value: unknown): value is Entry {
  if (!isPlainObject(value)) return false;
  const { version, shim, executable, envChanges, stamps } = value;
  return (
    version === 1 &&
    typeof shim === "string" &&
    typeof executable === "string" &&
    isPlainObject(envChanges) &&
    Object.values(envChanges).every((v) => typeof v === "string" || v === null) &&
    isPlainObject(stamps) &&
    Object.values(stamps).every((v) => typeof v === "string")
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const MARKER = "@@icode-launch@@";

/** Run by the shim: what it executed and with which environment (`-S`: nothing of site-packages runs). */
const PROBE = [
  "import json, os, sys",
  "argv = getattr(sys, 'orig_argv', None)",
  // The marker is split so that the probe's own text, echoed in `argv`, does not contain it.
  `sys.stdout.write('${MARKER.slice(0, 8)}' + '${MARKER.slice(8)}' + json.dumps({'executable': sys.executable, 'argv': argv, 'env': dict(os.environ)}))`,
].join("\n");

/** The variables pyenv reads to decide; other variables pass through a shim unchanged. */
function decisive(name: string): boolean {
  return (
    name === "PATH" ||
    name === "HOME" ||
    name === "PWD" ||
    name.startsWith("PYENV_") ||
    name.startsWith("_PYENV_")
  );
}

/**
 * How to start the interpreter a workflow selected (`command`, an absolute path as the interpreter resolution
 * returns it). Usually the selected file itself; but when `python3` on `PATH` is a pyenv shim, starting it
 * costs a shell script and several pyenv commands (≈ 100–200 ms) before Python even begins, on every `icode`
 * command. For a pyenv shim the engine therefore starts the binary the
 * shim would run, with the environment it would give it, as long as nothing pyenv decides by has changed.
 *
 * A shim cannot be cached by its own path and time alone: pyenv picks the version from `PYENV_VERSION`, the
 * first `.python-version` file from the working folder up (`pyenv local`), or `$PYENV_ROOT/version`
 * (`pyenv global`), and a version such as `3.12` means the newest one installed. So the shim is run once
 * with a probe that reports the executable and environment it ends up with, and the answer is kept in
 * `<CHRYS_HOME>/cache/interpreters/` together with a stamp (inode, size, modification time, or absence) of
 * every file that decision read: the shim, each `.python-version` looked for, `$PYENV_ROOT/version`, the
 * `versions` folder and the executable. It is keyed by the shim, the working folder and the variables pyenv
 * reads (`PATH`, `HOME`, `PWD`, `PYENV_*`). Any difference and the shim is run again. Wrappers other than pyenv
 * shims (asdf, mise, a script of the user's) are always started as they are: what they depend on is unknown.
 */
export function launchFor(command: string, options: LaunchOptions): Promise<Launch> {
  const known = knownLaunch(command, options);
  if (known !== null) return Promise.resolve(known);
  const file = path.join(options.cacheDir, `${keyOf(command, options)}.json`);
  return probeAndKeep(command, options, file, { command, env: options.env });
}

/**
 * `launchFor` when it needs no probe (not a pyenv shim, or a shim kept in the cache), else `null`.
 * Synchronous (a few small reads and stats, no trip through libuv's thread pool): Python is started before
 * the engine's other work (the engine's `startDefaultEarly` and `prestartValidation`), and is then spawned before that work's
 * first I/O comes back.
 */
export function knownLaunch(command: string, options: LaunchOptions): Launch | null {
  if (!isPyenvShim(command)) return { command, env: options.env };
  const cached = readEntry(path.join(options.cacheDir, `${keyOf(command, options)}.json`));
  if (cached !== null && cached.shim === command && stampsHold(cached.stamps)) {
    return { command: cached.executable, env: applyChanges(options.env, cached.envChanges) };
  }
  return null;
}

/** Runs the shim with the probe and keeps what it found in `file`; `direct` when the probe failed. */
async function probeAndKeep(
  command: string,
  options: LaunchOptions,
  file: string,
  direct: Launch,
): Promise<Launch> {
  const entry = await probe(command, options);
  if (entry === null) return direct;
  await writeEntry(file, entry);
  return { command: entry.executable, env: applyChanges(options.env, entry.envChanges) };
}

/** A pyenv shim: a script whose body hands over to `pyenv exec`. Reads at most the first 4 KiB. */
function isPyenvShim(command: string): boolean {
  let fd: number;
  try {
    fd = openSync(command, "r");
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(4096);
    const text = head.toString("utf8", 0, readSync(fd, head, 0, head.length, 0));
    return text.startsWith("#!") && /pyenv"? exec /.test(text);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

function keyOf(command: string, options: LaunchOptions): string {
  const env = Object.entries(options.env)
    .filter(([name, value]) => decisive(name) && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify([command, path.resolve(options.cwd), env]))
    .digest("hex");
}

/** Variables bash sets or rewrites in any script it runs. */
const SHELL_BOOKKEEPING = new Set(["_", "SHLVL", "OLDPWD"]);

/** Runs the shim once with the probe, and records what it did and which files its choice read. */
async function probe(shim: string, options: LaunchOptions): Promise<Entry | null> {
  // Loaded on the first probe only (~85 ms to import): most starts need none (`knownLaunch`).
  const { execa } = await import("execa");
  const run = await execa(shim, ["-S", "-c", PROBE], {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false, // the caller's environment exactly: it is what the shim decides by
    stdin: "ignore",
    timeout: options.probeTimeoutMs ?? 20_000,
    maxBuffer: 4 * 1024 * 1024,
    stripFinalNewline: false,
    reject: false, // a failed probe means "start the shim itself", not an error
  });
  const stdout = run.failed ? null : run.stdout;
  const at = stdout?.lastIndexOf(MARKER) ?? -1;
  if (stdout == null || at < 0) return null;
  let report: { executable?: unknown; argv?: unknown; env?: unknown };
  try {
    report = JSON.parse(stdout.slice(at + MARKER.length));
  } catch {
    return null;
  }
  const { executable, argv, env } = report;
  if (typeof executable !== "string" || !path.isAbsolute(executable)) return null;
  // The shim must pass our arguments through untouched (an extra -E or -I would change the worker), which
  // only Python 3.10+ can show; older interpreters keep going through the shim.
  if (!Array.isArray(argv) || JSON.stringify(argv.slice(1)) !== JSON.stringify(["-S", "-c", PROBE]))
    return null;
  if (typeof env !== "object" || env === null) return null;
  const after = env as Record<string, unknown>;
  const envChanges: Record<string, string | null> = {};
  for (const name of new Set([...Object.keys(options.env), ...Object.keys(after)])) {
    const before = options.env[name];
    const now = after[name];
    // Bash's own bookkeeping (`_`, the last command; `SHLVL`, set to 1 when absent; `OLDPWD`) means nothing
    // to Python and is not replayed.
    if (now === before || SHELL_BOOKKEEPING.has(name)) continue;
    // Python itself sets LC_CTYPE when the locale is C or POSIX (PEP 538); the worker will do the same.
    if (name === "LC_CTYPE" && before === undefined) continue;
    // Anything beyond what pyenv itself sets (a plugin hook exporting other variables) is not replayed.
    if (!decisive(name) || (now !== undefined && typeof now !== "string")) return null;
    envChanges[name] = now === undefined ? null : now;
  }
  const root = typeof after["PYENV_ROOT"] === "string" ? after["PYENV_ROOT"] : null;
  if (root === null) return null;
  // pyenv looks from PYENV_DIR, else from the shell's PWD, then from PWD when PYENV_DIR is elsewhere: stamp
  // every folder either can mean.
  const cwd = path.resolve(options.cwd);
  const pwd = logicalCwd(options.env["PWD"], cwd);
  const pyenvDir = options.env["PYENV_DIR"] ? path.resolve(cwd, options.env["PYENV_DIR"]) : pwd;
  const starts = [...new Set([pyenvDir, pwd, cwd])];
  const files = [
    shim,
    ...starts.flatMap(versionFileCandidates),
    path.join(root, "version"),
    path.join(root, "versions"),
    executable,
  ];
  const stamps: Record<string, string> = {};
  for (const file of files) stamps[file] = stampOf(file);
  if (stamps[executable] === "missing") return null;
  return { version: 1, shim, executable, envChanges, stamps };
}

/**
 * The shell's `PWD` in the worker's folder: the inherited `PWD` when it names that folder (possibly through
 * a link, whose parents pyenv then walks), else the folder itself, as bash decides.
 */
function logicalCwd(inherited: string | undefined, cwd: string): string {
  if (inherited === undefined || !path.isAbsolute(inherited) || inherited === cwd) return cwd;
  try {
    const a = statSync(inherited);
    const b = statSync(cwd);
    return a.dev === b.dev && a.ino === b.ino ? path.normalize(inherited) : cwd;
  } catch {
    return cwd;
  }
}

/**
 * Where `pyenv version-file` looks: `.python-version` in `dir` and each parent, up to the first regular file.
 * Every path up to it is stamped, so a file created closer to the folder is noticed.
 */
function versionFileCandidates(dir: string): string[] {
  const candidates: string[] = [];
  for (let current = dir; ; current = path.dirname(current)) {
    const file = path.join(current, ".python-version");
    candidates.push(file);
    if (stampOf(file).startsWith("file:") || path.dirname(current) === current) return candidates;
  }
}

function stampOf(file: string): string {
  let st: BigIntStats | undefined;
  try {
    st = statSync(file, { bigint: true, throwIfNoEntry: false });
  } catch {
    return "unreadable";
  }
  if (st === undefined) return "missing";
  return `${st.isDirectory() ? "dir" : "file"}:${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function stampsHold(stamps: Record<string, string>): boolean {
  return Object.entries(stamps).every(([file, stamp]) => stampOf(file) === stamp);
}

function applyChanges(
  env: Record<string, string | undefined>,
  changes: Record<string, string | null>,
): Record<string, string | undefined> {
  const result = { ...env };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete result[name];
    else result[name] = value;
  }
  return result;
}

/**
 * The entry, if it is a file of this user that nobody else can change: it names a program to run, so it is
 * held to the rule of trust records (owned by the user or root, not writable by group or others).
 */
function readEntry(file: string): Entry | null {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const st = fstatSync(fd);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid && st.uid !== 0) || (st.mode & 0o022) !== 0) {
      return null;
    }
    const entry: unknown = JSON.parse(readFileSync(fd, "utf8"));
    return isEntry(entry) ? entry : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Best effort: a cache that cannot be written only means the shim runs again next time. */
async function writeEntry(file: string, entry: Entry): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(temp, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    await rename(temp, file);
  } catch {
    await unlink(temp).catch(() => undefined);
  }
}
