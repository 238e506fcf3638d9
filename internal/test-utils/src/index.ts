/**
 * @module @icode/test-utils
 * Helpers for integration tests: temporary folders and configuration directories, inline file trees, and
 * `runCli()`, which spawns the built `icode` binary the way a user would.
 *
 * @example
 * const dir = await tmpDir();
 * await writeTree(dir, { ".chrys/workflows/echo.py": ECHO });
 * const { exitCode, stdout } = await runCli(["workflow", "validate", ".chrys/workflows/echo.py"], { cwd: dir });
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const CLI_BIN = join(REPO_ROOT, "apps", "cli", "dist", "bin.js");
export const EXAMPLES_DIR = join(REPO_ROOT, "examples");

/** A one-node workflow file whose node returns its input (`echo`), for tests that need any valid workflow. */
export const ECHO_WORKFLOW = `from chrys.workflows import WorkflowBuilder, WorkflowValue


def echo(value: WorkflowValue) -> WorkflowValue:
    return value


wf = WorkflowBuilder("Echo")
node = wf.python("echo", echo)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

/** A new empty folder under the system temp folder, with permissions our ownership checks accept. */
export function tmpDir(prefix = "icode-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

export type Tree = Record<string, string | Buffer>;

/** Writes `{ "relative/path": content }` under `root`, creating folders (mode 0755, files 0644). */
export function writeTree(root: string, tree: Tree): void {
  for (const [rel, content] of Object.entries(tree)) {
    const file = join(root, rel);
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    writeFileSync(file, content, { mode: 0o644 });
  }
}

export interface CliResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  cwd: string;
  /** Extra environment; `CHRYS_HOME` defaults to `<cwd>/.home` so tests never touch the real one. */
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
  /** Run as another user (tests that need permissions root would bypass). */
  uid?: number;
  gid?: number;
}

/** Runs the built `icode` CLI as a child process and collects its output. */
export function runCli(args: string[], options: RunCliOptions): Promise<CliResult> {
  if (!existsSync(CLI_BIN)) {
    throw new Error(`the CLI is not built: ${CLI_BIN} is missing; run \`pnpm build\` first`);
  }
  const env: Record<string, string | undefined> = {
    ...process.env,
    CHRYS_HOME: join(options.cwd, ".home"),
    NO_COLOR: "1",
    ...options.env,
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: options.cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 90_000);
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolvePromise({
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Whether process `pid` is running: a zombie waiting to be reaped counts as gone. */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return process.platform !== "linux"; // no /proc: trust kill(0)
  }
}

/** Polls `check` every 20 ms until it holds (`true`) or `timeoutMs` passed (`false`). */
export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((done) => setTimeout(done, 20));
  }
  return true;
}

/**
 * Bundles a TypeScript file (`entry`, an absolute path) with the workspace packages' sources and zod into one
 * ESM file in `outDir` that a plain `node` child process can run: Node 20 cannot run TypeScript, and tests
 * must not depend on a prior `pnpm build`. Uses tsup, the packages' own build tool. Returns the file's path.
 */
export async function bundleForNode(entry: string, outDir: string): Promise<string> {
  const { build } = await import("tsup");
  const name = basename(entry, ".ts");
  await build({
    config: false,
    entry: { [name]: entry },
    outDir,
    format: ["esm"],
    platform: "node",
    target: "node20",
    dts: false,
    sourcemap: false,
    splitting: false,
    clean: false,
    silent: true,
    noExternal: [/.*/],
    esbuildOptions(options) {
      options.conditions = ["source"];
    },
  });
  return join(outDir, `${name}.js`);
}

/**
 * A stand-in for pyenv: `<root>/shims/python3` hands over to `<root>/libexec/pyenv exec`, which picks a
 * version the way pyenv does (PYENV_VERSION, then the first `.python-version` from PYENV_DIR or the working
 * folder up, then `<root>/version`), exports what pyenv exports, and runs `<root>/versions/<v>/bin/python3`
 * (a link to `python`, the real interpreter). Every run of the shim is appended to `<root>/runs`.
 */
export function fakePyenv(
  python: string,
  extraExports = "",
): { root: string; shim: string; runs: () => number } {
  const root = tmpDir("icode-pyenv-");
  for (const version of ["3.0.1", "3.0.2"]) {
    mkdirSync(join(root, "versions", version, "bin"), { recursive: true });
    symlinkSync(python, join(root, "versions", version, "bin", "python3"));
  }
  writeTree(root, {
    version: "3.0.1\n",
    "shims/python3": `#!/usr/bin/env bash
set -e
program="\${0##*/}"
export PYENV_ROOT="${root}"
exec "${root}/libexec/pyenv" exec "$program" "$@"
`,
    "libexec/pyenv": `#!/usr/bin/env bash
set -e
echo run >> "$PYENV_ROOT/runs"
shift # exec
program="$1"; shift
: "\${PYENV_DIR:=$PWD}"
export PYENV_DIR
if [ -z "$PYENV_VERSION" ]; then
  dir="$PYENV_DIR"
  while :; do
    if [ -f "$dir/.python-version" ]; then PYENV_VERSION="$(cat "$dir/.python-version")"; break; fi
    [ "$dir" = "/" ] && break
    dir="$(dirname "$dir")"
  done
fi
[ -n "$PYENV_VERSION" ] || PYENV_VERSION="$(cat "$PYENV_ROOT/version")"
export PYENV_VERSION
export PATH="$PYENV_ROOT/versions/$PYENV_VERSION/bin:$PATH"
${extraExports}
exec "$PYENV_ROOT/versions/$PYENV_VERSION/bin/$program" "$@"
`,
  });
  chmodSync(join(root, "shims", "python3"), 0o755);
  chmodSync(join(root, "libexec", "pyenv"), 0o755);
  const runs = () =>
    existsSync(join(root, "runs")) ? readFileSync(join(root, "runs"), "utf8").length / 4 : 0;
  return { root, shim: join(root, "shims", "python3"), runs };
}
