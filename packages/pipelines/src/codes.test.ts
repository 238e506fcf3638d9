import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PIPELINE_CODES, PIPELINE_RUN_CODES, PIPELINE_STORE_CODES, PipelineError } from "./codes";

describe("pipeline codes", () => {
  it("every code has a heading under Pipeline codes at the end of docs/errors.md", async () => {
    const doc = await readFile(new URL("../../../docs/errors.md", import.meta.url), "utf8");
    const start = doc.indexOf("\n# Pipeline codes\n");
    expect(start).toBeGreaterThan(0);
    const section = doc.slice(start);
    const headings = [...section.matchAll(/^### `([a-z0-9_]+)`$/gmu)].map((m) => m[1]);
    expect(headings.sort()).toEqual(
      [...PIPELINE_CODES, ...PIPELINE_STORE_CODES, ...PIPELINE_RUN_CODES].sort(),
    );
  });

  it("a PipelineError is a WorkflowError with a code, a hint and diagnostics", () => {
    const error = new PipelineError("pipeline_revision_conflict", "stale", { hint: "read it again" });
    expect(error).toMatchObject({
      code: "pipeline_revision_conflict",
      hint: "read it again",
      diagnostics: [],
    });
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for("icode.error")]).toBe(true);
  });
});
