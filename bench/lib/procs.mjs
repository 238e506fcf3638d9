// Starting processes for measurement: every process-level figure goes through python/proc_runner.py, so that
// `node -e 0`, `python -c pass`, the CLI and the child processes are all timed the same way, with wait4's
// peak resident memory.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";

const BENCH_DIR = new URL("..", import.meta.url).pathname;
const RUNNER = join(BENCH_DIR, "python", "proc_runner.py");

/**
 * The Python interpreter the engine would use by default (`ICODE_PYTHON`, else `python3` on `PATH`), resolved
 * to the real binary (`sys.executable`), since a `python3` on `PATH` may be a shim script.
 * Returns `{ command, executable, version }` or throws with what was tried.
 */
export function resolvePython(env) {
  let command = env.ICODE_PYTHON || "python3";
  if (isAbsolute(command) && existsSync(command) && statSync(command).isDirectory()) {
    command = join(command, "bin", "python");
  }
  const probe = spawnSync(
    command,
    ["-c", "import sys; print(sys.executable); print(sys.version.split()[0])"],
    {
      env,
      encoding: "utf8",
    },
  );
  if (probe.status !== 0 || probe.error) {
    throw new Error(
      `cannot start Python (${command}): ${probe.error?.message ?? probe.stderr.trim()}; install Python 3.9+ or set ICODE_PYTHON`,
    );
  }
  const [executable, version] = probe.stdout.trim().split("\n");
  return { command, executable, version };
}

/** Another interpreter that can `import dask`, or null: the default one first, then Debian's /usr/bin/python3. */
export function findDaskPython(python, env) {
  const candidates = [env.ICODE_BENCH_DASK_PYTHON, python.executable, "/usr/bin/python3"].filter(Boolean);
  for (const candidate of [...new Set(candidates)]) {
    const probe = spawnSync(
      candidate,
      ["-c", "import dask, dask.threaded, sys; print(dask.__version__); print(sys.executable)"],
      {
        env,
        encoding: "utf8",
      },
    );
    if (probe.status === 0) {
      const [version, executable] = probe.stdout.trim().split("\n");
      return { executable, version };
    }
  }
  return null;
}

/** Where `runMeasured` makes its folders for each call's output: the run's own temporary folder. */
let scratchRoot = null;

/** Sets the folder `runMeasured` works in (default: the system's temporary folder). */
export function useScratch(dir) {
  scratchRoot = dir;
}

/**
 * Runs `argv` `reps` times (each time `parallel` copies at once) through the process runner.
 * Returns `{ runs: [{ wall_ms, exit_codes, max_rss_kib, timed_out, stdout: [...], stderr: [...] }] }`.
 */
export function runMeasured(python, { argv, cwd, env, reps = 1, parallel = 1, timeoutS = 120 }) {
  const outDir = mkdtempSync(join(scratchRoot ?? tmpdir(), "run-"));
  try {
    const job = { argv, cwd, env, reps, parallel, timeout_s: timeoutS, out_dir: outDir };
    const result = spawnSync(python.executable, [RUNNER], {
      input: JSON.stringify(job),
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.status !== 0) {
      throw new Error(`process runner failed (${result.status}): ${result.stderr.trim().slice(-2000)}`);
    }
    const report = JSON.parse(result.stdout);
    report.runs.forEach((run, rep) => {
      const stems =
        parallel === 1 ? [`rep-${rep}`] : Array.from({ length: parallel }, (_, k) => `rep-${rep}-${k}`);
      run.stdout = stems.map((stem) => readFileSync(join(outDir, `${stem}.out`), "utf8"));
      run.stderr = stems.map((stem) => readFileSync(join(outDir, `${stem}.err`), "utf8"));
    });
    return report;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The last nonempty line of a process's stdout, parsed as JSON, or null. */
export function lastJsonLine(text) {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0) return null;
  try {
    return JSON.parse(lines[lines.length - 1]);
  } catch {
    return null;
  }
}

/** A short description of why a measured process failed: its exit code or timeout and the end of its stderr. */
export function failure(run, boundS) {
  if (run.timed_out) return `did not finish within ${boundS} s`;
  const stderr = run.stderr.join("\n").trim().split("\n").slice(-3).join(" ⏎ ");
  return `exit ${run.exit_codes.join(",")}${stderr ? `: ${stderr.slice(0, 400)}` : ""}`;
}

/** Writes `value` as JSON into a fresh file under `dir` and returns its path. */
export function writeJob(dir, name, value) {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(value));
  return path;
}
