import { describe, expect, it } from "vitest";
import { DiagnosticSchema, diagnostic, isWorkflowError, STAGES, WorkflowError } from "./index";

describe("diagnostic()", () => {
  it("fills every field the validate report requires, with null for unknown values", () => {
    const d = diagnostic({ code: "path_not_found", stage: "resolve", message: "nothing at ./x.py" });
    expect(d).toEqual({
      severity: "error",
      code: "path_not_found",
      stage: "resolve",
      message: "nothing at ./x.py",
      file: null,
      line: null,
      column: null,
      end_line: null,
      end_column: null,
      node: null,
      source_line: null,
      notes: [],
      hint: null,
      traceback: null,
      pointer: null,
    });
    expect(DiagnosticSchema.parse(d)).toEqual(d);
  });

  it("keeps the fields given", () => {
    const d = diagnostic({ code: "shadowed", stage: "resolve", message: "m", severity: "warning", line: 3 });
    expect(d).toMatchObject({ severity: "warning", line: 3 });
  });

  it("lists the stages in the order validate runs them", () => {
    expect(STAGES).toEqual(["resolve", "read", "metadata", "environment", "load", "graph", "bindings"]);
  });
});

describe("WorkflowError", () => {
  it("carries a code, a hint and a cause, and is recognised by its marker", () => {
    const cause = new Error("EACCES");
    const error = new WorkflowError("storage_failed", "cannot write", { hint: "check permissions", cause });
    expect(error).toMatchObject({
      code: "storage_failed",
      hint: "check permissions",
      message: "cannot write",
    });
    expect(error.cause).toBe(cause);
    expect(isWorkflowError(error)).toBe(true);
  });

  it("is recognised across copies of the package by the shared symbol, not instanceof", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("icode.error")]: true, code: "x" });
    expect(isWorkflowError(foreign)).toBe(true);
    expect(isWorkflowError(new Error("plain"))).toBe(false);
    expect(isWorkflowError(null)).toBe(false);
    expect(isWorkflowError("storage_failed")).toBe(false);
  });
});
