import { realpathSync } from "node:fs";
import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import type { Env } from "./interpreter";
import { type InterpreterInfo, InterpreterInfoSchema } from "./schema";

/**
 * Starts an interpreter once and asks it what it is: the `environment` stage's "exists and starts" check and
 * the facts for the environment fingerprint (clarification 24). Spawn `info.executable` afterwards: a `python3`
 * found on `PATH` may be a shell shim (pyenv, asdf) that costs 150 ms or more per start, while
 * `sys.executable` names the binary it ends up running (for a venv, the venv's own `bin/python`).
 *
 * The probe runs with `-E -s -S` (no `PYTHON*` variables, no user or site packages: nothing of the workflow's
 * environment can break it) and is written so that even Python 2 answers, which lets `checkEnvironment` say
 * "too old" instead of reporting a crash.
 */

const MARKER = "@@icode-probe@@";

const PROBE = [
  "import sys",
  "sys.path[:] = [p for p in sys.path if p not in ('', '.')]",
  "import json, os, platform",
  "try:",
  "    libc = ' '.join(part for part in platform.libc_ver() if part) or None",
  "except Exception:",
  "    libc = None",
  "executable = sys.executable or ''",
  "v = sys.version_info",
  "info = {",
  "    'executable': executable,",
  "    'resolved_path': os.path.realpath(executable) if executable else '',",
  "    'implementation': platform.python_implementation(),",
  "    'version': platform.python_version(),",
  "    'version_info': [v[0], v[1], v[2]],",
  "    'platform': sys.platform,",
  "    'machine': platform.machine(),",
  "    'libc': libc,",
  "}",
  `sys.stdout.write('\\n${MARKER}' + json.dumps(info) + '\\n')`,
  "sys.stdout.flush()",
].join("\n");

export interface ProbeOptions {
  /** The environment the interpreter starts with; pass the one the workflow will run with. */
  env: Env;
  /** Milliseconds to wait for the answer; default 20 000 (a cold start on a loaded machine can be slow). */
  timeoutMs?: number;
  /** The folder to start in; files there (a `platform.py`, say) cannot shadow the modules the probe uses. */
  cwd?: string;
  /** The workflow file the diagnostics concern, if any. */
  file?: string | null;
}

/** What the interpreter reported, or one `environment_invalid` error when it could not start or gave no answer. */
export type ProbeResult =
  | { ok: true; info: InterpreterInfo; diagnostics: [] }
  | { ok: false; info: null; diagnostics: Diagnostic[] };

/** Runs `command` (an absolute path, as `resolvePythonSetting` returns) and reads what it reports. */
export async function probeInterpreter(command: string, options: ProbeOptions): Promise<ProbeResult> {
  const timeout = options.timeoutMs ?? 20_000;
  const fail = (message: string, hint: string, traceback: string | null = null): ProbeResult => ({
    ok: false,
    info: null,
    diagnostics: [
      diagnostic({
        code: "environment_invalid",
        stage: "environment",
        message,
        hint,
        file: options.file ?? null,
        traceback,
      }),
    ],
  });

  // execa is loaded when a probe runs: importing it costs ~85 ms, which a program that imports this
  // package and never probes should not pay.
  const { execa } = await import("execa");
  const run = await execa(command, ["-E", "-s", "-S", "-c", PROBE], {
    env: { ...options.env },
    extendEnv: false, // exactly the workflow's environment, not this process's on top
    cwd: options.cwd,
    stdin: "ignore",
    timeout,
    maxBuffer: 1024 * 1024,
    stripFinalNewline: false,
    reject: false, // a failure is a result here; it becomes a diagnostic below
  });
  const line = run.stdout
    .split(/\r?\n/)
    .reverse()
    .find((candidate) => candidate.startsWith(MARKER));
  if (run.failed && line === undefined) {
    const details = tail(run.stderr);
    if (run.timedOut) {
      return fail(
        `the Python interpreter ${command} did not answer within ${Math.round(timeout / 1000)} s`,
        "check that it starts from a shell (try running it with --version)",
      );
    }
    if (run.exitCode === undefined && run.signal === undefined && run.code !== undefined) {
      // Not started at all (ENOENT, EACCES, …): execa reports the system's error code.
      return fail(
        `the Python interpreter ${command} could not be started: ${run.code}`,
        "check that the path names a working Python executable",
      );
    }
    return fail(
      `the Python interpreter ${command} failed to start (exit code ${String(run.exitCode ?? run.signal)})${details === "" ? "" : `: ${lastLine(details)}`}`,
      "run it from a shell to see the problem; a broken or half-deleted environment must be recreated",
      details === "" ? null : details,
    );
  }
  if (line === undefined) {
    return fail(
      `the Python interpreter ${command} started but did not report its version`,
      "check that the path names a Python interpreter and not another program",
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(line.slice(MARKER.length));
  } catch {
    raw = null;
  }
  const parsed = InterpreterInfoSchema.safeParse(withFallbacks(raw, command));
  if (!parsed.success) {
    return fail(
      `the Python interpreter ${command} gave an answer iCode cannot read`,
      "check that the path names a CPython or PyPy interpreter",
    );
  }
  return { ok: true, info: parsed.data, diagnostics: [] };
}

/** An embedded or unusual Python may leave `sys.executable` empty: the command we started stands in for it. */
function withFallbacks(raw: unknown, command: string): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const record = raw as Record<string, unknown>;
  if (record["executable"] !== "") return raw;
  let resolved = command;
  try {
    resolved = realpathSync(command);
  } catch {
    // keep the command as it is
  }
  return { ...record, executable: command, resolved_path: resolved };
}

function tail(text: string): string {
  const trimmed = text.trimEnd();
  return trimmed.length > 4000 ? trimmed.slice(-4000) : trimmed;
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  return (lines[lines.length - 1] ?? "").trim().slice(0, 200);
}
