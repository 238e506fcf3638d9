import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "@icode/test-utils";
import type { PrestartedValidation } from "@icode/workflow-engine";
import { afterEach, expect, it } from "vitest";
import type { CliIo } from "./io";
import { prestartValidate } from "./prestart";

const PYTHON = execFileSync("python3", ["-c", "import os, sys; print(os.path.realpath(sys.executable))"])
  .toString()
  .trim();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An io whose default interpreter is a wrapper noting each start in `<cwd>/runs`. */
function setup(): { io: CliIo; runs: () => number } {
  const cwd = mkdtempSync(join(tmpdir(), "icode-cli-prestart-"));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  mkdirSync(join(cwd, "bin"));
  writeFileSync(join(cwd, "bin", "py"), `#!/bin/sh\necho run >> "${cwd}/runs"\nexec "${PYTHON}" "$@"\n`);
  chmodSync(join(cwd, "bin", "py"), 0o755);
  const io: CliIo = {
    cwd,
    env: { ...process.env, ICODE_PYTHON: join(cwd, "bin", "py"), CHRYS_HOME: join(cwd, ".home") },
    stdin: process.stdin,
    stdout: { write: () => true },
    stderr: { write: () => true },
    terminal: { stdin: false, stderr: false },
  };
  const runs = () =>
    existsSync(join(cwd, "runs")) ? readFileSync(join(cwd, "runs"), "utf8").split("\n").length - 1 : 0;
  return { io, runs };
}

/** Keeps `prestarted` to be discarded after the test (a failed assertion must leave no process behind). */
function keep(prestarted: PrestartedValidation | null): PrestartedValidation | null {
  if (prestarted !== null) {
    cleanups.push(async () => {
      const { child } = prestarted.process;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      prestarted.process.discard();
      await exited;
    });
  }
  return prestarted;
}

it("starts the validation's worker in the current directory, once per call", async () => {
  const { io, runs } = setup();
  const prestarted = keep(prestartValidate(io));
  expect(prestarted?.interpreter).toBe(join(io.cwd, "bin", "py"));
  expect(prestarted?.process.options).toMatchObject({ cwd: io.cwd, loadOnly: true });
  expect(prestarted?.process.taken).toBe(false);
  // The wrapper notes a start promptly.
  expect(await waitUntil(() => runs() > 0, 10_000)).toBe(true);
  expect(runs()).toBe(1);
});

it("starts nothing when the default interpreter is not usable", () => {
  const { io } = setup();
  expect(prestartValidate({ ...io, env: { ...io.env, ICODE_PYTHON: "relative/py" } })).toBeNull();
});
