import { type ChildProcess, execFileSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ECHO_WORKFLOW as ECHO, tmpDir, writeTree } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { engineContext } from "../src/context";
import { type PrestartedValidation, prestartValidation, validateWorkflowFor } from "../src/index";
import { startDefaultEarly } from "../src/validate/prepare";

/** The real interpreter the wrappers below start. */
const PYTHON = execFileSync("python3", ["-c", "import os, sys; print(os.path.realpath(sys.executable))"])
  .toString()
  .trim();

/** Every prestarted process is ended after its test, so that a failed assertion leaves none behind. */
const started: PrestartedValidation[] = [];
afterEach(async () => {
  for (const { process: spawned } of started.splice(0)) {
    const { child } = spawned;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
  }
});

/**
 * A workspace whose default interpreter (`ICODE_PYTHON`) is `bin/py`, a wrapper of the user's that notes
 * each start in `runs` and then runs Python; `bin/other` is a second one (noting in `other-runs`).
 */
function setup(tree: Record<string, string> = {}) {
  const cwd = tmpDir();
  writeTree(cwd, {
    "bin/py": `#!/bin/sh\necho run >> "${cwd}/runs"\nexec "${PYTHON}" "$@"\n`,
    "bin/other": `#!/bin/sh\necho run >> "${cwd}/other-runs"\nexec "${PYTHON}" "$@"\n`,
    ".chrys/workflows/echo.py": ECHO,
    ...tree,
  });
  chmodSync(join(cwd, "bin", "py"), 0o755);
  chmodSync(join(cwd, "bin", "other"), 0o755);
  const env = { ...process.env, ICODE_PYTHON: join(cwd, "bin", "py"), CHRYS_HOME: join(cwd, ".home") };
  const count = (name: string) =>
    existsSync(join(cwd, name)) ? readFileSync(join(cwd, name), "utf8").split("\n").length - 1 : 0;
  return {
    cwd,
    env,
    /** How many times the default interpreter (`bin/py`) was started. */
    runs: () => count("runs"),
    /** How many times `bin/other` was started. */
    otherRuns: () => count("other-runs"),
  };
}

function prestart(engine: Parameters<typeof prestartValidation>[0]): PrestartedValidation {
  const prestarted = prestartValidation(engine);
  expect(prestarted).not.toBeNull();
  started.push(prestarted!);
  return prestarted!;
}

/** Resolves with how `child` ended, at once when it already has; rejects after `timeoutMs`. */
function exitOf(child: ChildProcess, timeoutMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`process ${child.pid} still runs`)), timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      done({ code, signal });
    });
  });
}

describe("prestartValidation", () => {
  it("spawns the default interpreter in load-only mode, in the workspace, with the engine's bytecode folder", () => {
    const s = setup();
    const prestarted = prestart({ cwd: s.cwd, env: s.env });
    expect(prestarted.interpreter).toBe(join(s.cwd, "bin", "py"));
    expect(prestarted.process.python).toBe(join(s.cwd, "bin", "py"));
    expect(prestarted.process.options).toEqual({
      cwd: s.cwd,
      cacheDir: engineContext({ cwd: s.cwd, env: s.env }).pycacheDir,
      loadOnly: true,
    });
    expect(prestarted.process.child.spawnargs.at(-1)).toBe("--load-only");
    expect(prestarted.process.taken).toBe(false);
  });

  it("starts nothing when there is no default interpreter", () => {
    const s = setup();
    expect(prestartValidation({ cwd: s.cwd, env: { ...s.env, ICODE_PYTHON: "bin/py" } })).toBeNull();
    expect(
      prestartValidation({ cwd: s.cwd, env: { ...s.env, ICODE_PYTHON: join(s.cwd, "nope") } }),
    ).toBeNull();
    expect(s.runs()).toBe(0);
  });

  it("starts nothing when the default interpreter is a pyenv shim not probed yet", () => {
    const s = setup();
    const root = tmpDir("icode-pyenv-");
    writeTree(root, {
      "shims/python3": `#!/usr/bin/env bash\necho run >> "${root}/runs"\nexec "${root}/libexec/pyenv" exec "python3" "$@"\n`,
    });
    chmodSync(join(root, "shims", "python3"), 0o755);
    expect(
      prestartValidation({ cwd: s.cwd, env: { ...s.env, ICODE_PYTHON: join(root, "shims", "python3") } }),
    ).toBeNull();
    expect(existsSync(join(root, "runs"))).toBe(false);
  });
});

/** Validates `path` in the setup's folder and environment, with `prestarted`. */
function validateIn(
  s: { cwd: string; env: Record<string, string | undefined> },
  path: string,
  prestarted: PrestartedValidation,
) {
  return validateWorkflowFor(path, { cwd: s.cwd, env: s.env }, { prestarted });
}

describe("validating with a prestarted worker", () => {
  it("adopts it when the workflow uses the default interpreter: no second Python is started", async () => {
    const s = setup();
    const prestarted = prestart({ cwd: s.cwd, env: s.env });
    const report = await validateIn(s, ".chrys/workflows/echo.py", prestarted);
    expect(report.status).toBe("pass");
    expect(report.environment).toMatchObject({ kind: "default", executable: PYTHON });
    expect(prestarted.process.taken).toBe(true);
    expect(s.runs()).toBe(1);
    // The validation closed the worker it adopted: a shutdown, not a kill.
    expect(await exitOf(prestarted.process.child)).toEqual({ code: 0, signal: null });
  });

  it("ends it and starts the interpreter the workflow names", async () => {
    const s = setup({
      ".chrys/workflows/own.py": `# /// script\n# [tool.chrys]\n# python = "../../bin/other"\n# ///\n${ECHO}`,
    });
    const prestarted = prestart({ cwd: s.cwd, env: s.env });
    const report = await validateIn(s, ".chrys/workflows/own.py", prestarted);
    expect(report.status).toBe("pass");
    expect(report.environment?.kind).toBe("user");
    expect(s.otherRuns()).toBe(1);
    expect(s.runs()).toBe(1); // the prestarted one only
    // Adopted as the validation started (the workflow was not read yet), then closed.
    expect(prestarted.process.taken).toBe(true);
    expect(await exitOf(prestarted.process.child)).toEqual({ code: 0, signal: null });
  });

  it("kills it when the validation runs in another folder, and validates with a worker of its own", async () => {
    const s = setup();
    const elsewhere = tmpDir();
    const prestarted = prestart({ cwd: elsewhere, env: s.env });
    const report = await validateIn(s, ".chrys/workflows/echo.py", prestarted);
    expect(report.status).toBe("pass");
    expect(report.environment).toMatchObject({ kind: "default", executable: PYTHON });
    // Killed at once (before its wrapper may even have run): the report comes from the validation's own worker.
    expect(await exitOf(prestarted.process.child)).toEqual({ code: null, signal: "SIGKILL" });
  });

  it("kills it when the default interpreter differs, or there is none", async () => {
    const s = setup();
    const other = prestart({ cwd: s.cwd, env: { ...s.env, ICODE_PYTHON: join(s.cwd, "bin", "other") } });
    const report = await validateIn(s, ".chrys/workflows/echo.py", other);
    expect(report.status).toBe("pass");
    expect(await exitOf(other.process.child)).toEqual({ code: null, signal: "SIGKILL" });
    expect(s.runs()).toBe(1);

    const orphan = prestart({ cwd: s.cwd, env: s.env });
    const failed = await validateWorkflowFor(
      ".chrys/workflows/echo.py",
      { cwd: s.cwd, env: { ...s.env, ICODE_PYTHON: "relative/python" } },
      { prestarted: orphan },
    );
    expect(failed.status).toBe("fail");
    expect(failed.diagnostics[0]).toMatchObject({ code: "environment_invalid", stage: "environment" });
    expect(await exitOf(orphan.process.child)).toEqual({ code: null, signal: "SIGKILL" });
  });

  it("reports a prestarted interpreter that failed before it was adopted with what it wrote to stderr", async () => {
    const s = setup({ "bin/broken": `#!/bin/sh\necho "this python is broken" >&2\nexit 3\n` });
    chmodSync(join(s.cwd, "bin", "broken"), 0o755);
    const env = { ...s.env, ICODE_PYTHON: join(s.cwd, "bin", "broken") };
    const prestarted = prestart({ cwd: s.cwd, env });
    expect(await exitOf(prestarted.process.child)).toEqual({ code: 3, signal: null });
    const report = await validateWorkflowFor(".chrys/workflows/echo.py", { cwd: s.cwd, env }, { prestarted });
    expect(report.status).toBe("fail");
    expect(report.diagnostics[0]).toMatchObject({
      code: "environment_invalid",
      stage: "environment",
      message: expect.stringMatching(/exited with code 3 before saying hello:\nthis python is broken/),
    });
  });

  it("ends it when the path does not resolve", async () => {
    const s = setup();
    const prestarted = prestart({ cwd: s.cwd, env: s.env });
    const report = await validateWorkflowFor("missing.py", { cwd: s.cwd, env: s.env }, { prestarted });
    expect(report.status).toBe("fail");
    expect(report.diagnostics[0]).toMatchObject({ code: "path_not_found" });
    // Adopted as the validation started (the path was not known yet), then closed.
    expect(prestarted.process.taken).toBe(true);
    expect(await exitOf(prestarted.process.child)).toEqual({ code: 0, signal: null });
  });
});

describe("startDefaultEarly with a prestarted worker", () => {
  it("adopts it only when the bytecode folder and the load-only mode match too", async () => {
    const s = setup();
    const ctx = engineContext({ cwd: s.cwd, env: s.env });

    const fitting = prestart({ cwd: s.cwd, env: s.env });
    const adopted = await startDefaultEarly(ctx, s.cwd, true, fitting).take(join(s.cwd, "bin", "py"));
    expect(adopted?.pid).toBe(fitting.process.child.pid);
    await adopted?.close();

    const calling = prestart({ cwd: s.cwd, env: s.env });
    const own = await startDefaultEarly(ctx, s.cwd, false, calling).take(join(s.cwd, "bin", "py"));
    expect(own?.pid).not.toBe(calling.process.child.pid);
    expect(await exitOf(calling.process.child)).toEqual({ code: null, signal: "SIGKILL" });
    await own?.close();

    const homeless = prestart({ cwd: s.cwd, env: { ...s.env, CHRYS_HOME: join(s.cwd, ".other-home") } });
    const fresh = await startDefaultEarly(ctx, s.cwd, true, homeless).take(join(s.cwd, "bin", "py"));
    expect(fresh?.pid).not.toBe(homeless.process.child.pid);
    expect(await exitOf(homeless.process.child)).toEqual({ code: null, signal: "SIGKILL" });
    await fresh?.close();
  });
});
