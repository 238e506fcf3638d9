import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ECHO_WORKFLOW as ECHO, fakePyenv, tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine, validateWorkflowFor } from "../src/index";

// How the engine starts interpreters: a pyenv shim through the binary it chose (`launchFor` of
// @icode/script-metadata, tested there), and the default interpreter started early.

/** The real interpreter the stand-in versions link to. */
const PYTHON = execFileSync("python3", ["-c", "import sys; print(sys.executable)"]).toString().trim();

describe("starting a pyenv shim", () => {
  it("validates, trusts and runs through the binary the shim chose, running the shim once", async () => {
    const pyenv = fakePyenv(PYTHON);
    const s = { ...pyenv, cwd: tmpDir() };
    writeTree(s.cwd, {
      ".chrys/workflows/echo.py": ECHO,
    });
    const env = {
      ...process.env,
      PYENV_VERSION: undefined,
      PYENV_DIR: undefined,
      PWD: s.cwd,
      ICODE_PYTHON: undefined,
      PATH: `${join(s.root, "shims")}:${process.env.PATH}`,
      CHRYS_HOME: join(s.cwd, ".home"),
    };
    const engine = createEngine({ cwd: s.cwd, env });
    const real = execFileSync(PYTHON, ["-c", "import os, sys; print(os.path.realpath(sys.executable))"])
      .toString()
      .trim();
    for (let i = 0; i < 2; i++) {
      const report = await engine.validate(".chrys/workflows/echo.py");
      expect(report.status).toBe("pass");
      expect(report.environment).toMatchObject({ kind: "default", executable: real });
    }
    await engine.trust("echo");
    const run = await engine.run({ workflowId: "echo", input: "hi" }).result;
    expect(run).toMatchObject({ status: "finished", outcome: "completed" });
    expect(s.runs()).toBe(1);
    await engine.close();
  });
});

describe("starting the interpreter early", () => {
  it("drops the default interpreter started early when the workflow names its own", async () => {
    const cwd = tmpDir();
    // A wrapper of the user's (not a pyenv shim): started as it is, and it notes each start.
    writeTree(cwd, {
      "bin/py": `#!/bin/sh\necho run >> "${cwd}/runs"\nexec "${PYTHON}" "$@"\n`,
      ".chrys/workflows/own.py": `# /// script\n# [tool.chrys]\n# python = "../../bin/py"\n# ///\n${ECHO}`,
    });
    chmodSync(join(cwd, "bin", "py"), 0o755);
    const env = { ...process.env, CHRYS_HOME: join(cwd, ".home") };
    const report = await validateWorkflowFor(".chrys/workflows/own.py", { cwd, env });
    expect(report.status).toBe("pass");
    expect(report.environment?.kind).toBe("user");
    expect(readFileSync(join(cwd, "runs"), "utf8")).toBe("run\n");
  });
});
