/**
 * A compiled file in the engine's bytecode cache (`<CHRYS_HOME>/cache/pycache`) cut short, as a full disk
 * leaves one: `icode workflow validate` and `run` used to fail with `environment_invalid` ("marshal data too
 * short") until the cache was deleted by hand. Now the start clears the cache's compiled files, starts
 * Python again, and says so on stderr.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ECHO_WORKFLOW } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { icode, type Project, parseRunJson, project, SLOW } from "./run-helpers";

/** Cuts the cached `typing` module (imported by the SDK at every start) to half its size. */
function truncateTyping(p: Project): void {
  const cache = join(p.home, "cache", "pycache");
  const file = readdirSync(cache, { recursive: true, encoding: "utf8" }).find(
    (name) => basename(name).startsWith("typing.") && name.endsWith(".pyc"),
  );
  expect(file, "a start compiled typing into the cache").toBeDefined();
  const whole = readFileSync(join(cache, file!));
  writeFileSync(join(cache, file!), whole.subarray(0, whole.length >> 1));
}

const WARNING =
  /^warning: Python could not start: a compiled file in iCode's bytecode cache .+ is damaged \(EOFError: marshal data too short; .+\)\. Removed the \d+ compiled files there and started again\. \[bytecode_cache_reset\]$/m;

/** Reports what a node sees of the two variables, and `sys.dont_write_bytecode`. */
const ENV_REPORT = `import os, sys
from chrys.workflows import WorkflowBuilder, WorkflowValue


def report(value: WorkflowValue) -> WorkflowValue:
    keys = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    return WorkflowValue("env", {"env": {k: os.environ.get(k) for k in keys}, "dont_write": sys.dont_write_bytecode})


wf = WorkflowBuilder("Env report")
n = wf.python("report", report)
wf.start(n)
wf.output(n)
workflow = wf.build()
`;

describe("PYTHONDONTWRITEBYTECODE", SLOW, () => {
  it("is removed from the worker's environment: compiled files go to the cache all the same", async () => {
    const p = project({ ".chrys/workflows/env-report.py": ENV_REPORT });
    const r = await icode(p, ["workflow", "run", "env-report", "--trust", "--json"], {
      PYTHONDONTWRITEBYTECODE: "1",
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const cache = join(p.home, "cache", "pycache");
    expect(parseRunJson(r).outputs[0]?.data).toEqual({
      env: { PYTHONDONTWRITEBYTECODE: null, PYTHONPYCACHEPREFIX: cache },
      dont_write: false,
    });
    const compiled = readdirSync(cache, { recursive: true, encoding: "utf8" });
    expect(compiled.some((name) => basename(name).startsWith("env-report."))).toBe(true);
  });
});

describe("a damaged compiled file in the bytecode cache", SLOW, () => {
  it("is dropped by `icode workflow validate`, which passes with a warning on stderr", async () => {
    const p = project({ ".chrys/workflows/echo.py": ECHO_WORKFLOW });
    expect((await icode(p, ["workflow", "validate", ".chrys/workflows/echo.py"])).exitCode).toBe(0);
    truncateTyping(p);
    const r = await icode(p, ["workflow", "validate", ".chrys/workflows/echo.py"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^PASS echo \(file\)/m);
    expect(r.stderr).toMatch(WARNING);
    // The next start finds a whole cache again.
    const next = await icode(p, ["workflow", "validate", ".chrys/workflows/echo.py", "--json"]);
    expect(next.exitCode).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ status: "pass" });
    expect(next.stderr).toBe("");
  });

  it("is dropped by `icode workflow run`, which runs the workflow with a warning on stderr", async () => {
    const p = project({ ".chrys/workflows/echo.py": ECHO_WORKFLOW });
    expect((await icode(p, ["workflow", "run", "echo", "--trust", "--input", "hi"])).exitCode).toBe(0);
    truncateTyping(p);
    const r = await icode(p, ["workflow", "run", "echo", "--input", "hi", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseRunJson(r)).toMatchObject({ outcome: "completed", outputs: [{ text: "hi" }] });
    expect(r.stderr).toMatch(WARNING);
  });
});
