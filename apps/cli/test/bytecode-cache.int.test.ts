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
