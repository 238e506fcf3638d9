import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ECHO_WORKFLOW, processRunning, runCli, tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";

const PYTHON = execFileSync("python3", ["-c", "import os, sys; print(os.path.realpath(sys.executable))"])
  .toString()
  .trim();

/**
 * A folder whose default interpreter (`ICODE_PYTHON`) is a wrapper that notes its process ID in `pids` and
 * then becomes Python (`exec` keeps the ID): every Python the CLI starts is listed there.
 */
function setup() {
  const cwd = tmpDir();
  writeTree(cwd, {
    "bin/py": `#!/bin/sh\necho $$ >> "${cwd}/pids"\nexec "${PYTHON}" "$@"\n`,
    ".chrys/workflows/echo.py": ECHO_WORKFLOW,
  });
  chmodSync(join(cwd, "bin", "py"), 0o755);
  const pids = (): number[] =>
    existsSync(join(cwd, "pids"))
      ? readFileSync(join(cwd, "pids"), "utf8").split("\n").filter(Boolean).map(Number)
      : [];
  return { cwd, env: { ICODE_PYTHON: join(cwd, "bin", "py") }, pids };
}

/** Waits (up to 10 s) for each of `pids` to end; returns those still running then, after killing them. */
async function leftRunning(pids: number[]): Promise<number[]> {
  const end = Date.now() + 10_000;
  while (pids.some(processRunning) && Date.now() < end) await new Promise((done) => setTimeout(done, 20));
  const left = pids.filter(processRunning);
  for (const pid of left) process.kill(pid, "SIGKILL");
  return left;
}

describe("icode workflow validate: the worker started before the command is loaded", () => {
  it("a usage error exits 2 at once, starting no Python", async () => {
    const s = setup();
    for (const args of [["a.py", "b.py"], [], ["a.py", "--bogus"]]) {
      const r = await runCli(["workflow", "validate", ...args], {
        cwd: s.cwd,
        env: s.env,
        timeoutMs: 20_000,
      });
      expect({ args, exitCode: r.exitCode, signal: r.signal }).toEqual({ args, exitCode: 2, signal: null });
      expect(r.stderr).toContain("Usage: icode workflow validate");
    }
    expect(s.pids()).toEqual([]);
  });

  it("help exits 0, starting no Python", async () => {
    const s = setup();
    const r = await runCli(["workflow", "validate", "echo.py", "--help"], { cwd: s.cwd, env: s.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("Usage: icode workflow validate");
    expect(s.pids()).toEqual([]);
  });

  it("validates with the Python it started early, once, and leaves none running", async () => {
    const s = setup();
    const r = await runCli(["workflow", "validate", ".chrys/workflows/echo.py", "--json"], {
      cwd: s.cwd,
      env: s.env,
    });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "pass", environment: { kind: "default" } });
    expect(s.pids()).toHaveLength(1);
    expect(await leftRunning(s.pids())).toEqual([]);
  });

  it("a path that does not resolve fails with 1 and leaves no Python running", async () => {
    const s = setup();
    const r = await runCli(["workflow", "validate", "missing.py"], { cwd: s.cwd, env: s.env });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("path_not_found");
    expect(await leftRunning(s.pids())).toEqual([]);
  });

  it("an interpreter that fails at once is reported with what it wrote to stderr", async () => {
    const s = setup();
    // Exits before the command is loaded, so before the validation adopts it.
    writeTree(s.cwd, { "bin/broken": `#!/bin/sh\necho "this python is broken" >&2\nexit 3\n` });
    chmodSync(join(s.cwd, "bin", "broken"), 0o755);
    const r = await runCli(["workflow", "validate", ".chrys/workflows/echo.py", "--json"], {
      cwd: s.cwd,
      env: { ICODE_PYTHON: join(s.cwd, "bin", "broken") },
    });
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] };
    expect(report.diagnostics[0]?.code).toBe("environment_invalid");
    expect(report.diagnostics[0]?.message).toMatch(
      /exited with code 3 before saying hello:\nthis python is broken/,
    );
  });

  it("a workflow naming its own interpreter validates with it, and the early Python ends", async () => {
    const s = setup();
    writeTree(s.cwd, {
      "bin/other": `#!/bin/sh\necho $$ >> "${s.cwd}/other-pids"\nexec "${PYTHON}" "$@"\n`,
      "own.py": `# /// script\n# [tool.chrys]\n# python = "bin/other"\n# ///\n${ECHO_WORKFLOW}`,
    });
    chmodSync(join(s.cwd, "bin", "other"), 0o755);
    const r = await runCli(["workflow", "validate", "own.py", "--json"], { cwd: s.cwd, env: s.env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: "pass", environment: { kind: "user" } });
    const other = readFileSync(join(s.cwd, "other-pids"), "utf8").split("\n").filter(Boolean).map(Number);
    expect(other).toHaveLength(1);
    expect(await leftRunning([...s.pids(), ...other])).toEqual([]);
  });
});
