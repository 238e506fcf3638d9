import { join } from "node:path";
import { ECHO_WORKFLOW as ECHO, tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine, listWorkflowsFor, validateWorkflowFor } from "../src/index";

describe("the one-shot functions", () => {
  it("list and validate as an engine does", async () => {
    const cwd = tmpDir();
    writeTree(cwd, { ".chrys/workflows/echo.py": ECHO, ".chrys/workflows/_skipped.py": ECHO });
    const options = { cwd, env: { ...process.env, CHRYS_HOME: join(cwd, ".home") } };
    const engine = createEngine(options);
    expect(await listWorkflowsFor(options)).toEqual(await engine.list());
    const report = await validateWorkflowFor(".chrys/workflows/echo.py", options);
    expect(report.status).toBe("pass");
    expect(report).toEqual(await engine.validate(".chrys/workflows/echo.py"));
  });
});
