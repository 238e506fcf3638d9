import { describe, expect, it } from "vitest";
import { checkHandoff } from "./handoff";
import { DEFAULT_OUTPUT_SCHEMA, type OutputSchema } from "./output-schema";

describe("the default handoff schema", () => {
  it("is the reference's schema", () => {
    expect(DEFAULT_OUTPUT_SCHEMA).toEqual({
      type: "object",
      properties: {
        summary: { type: "string" },
        artifacts: { type: "array", items: { type: "string" } },
        notes: { type: "string" },
      },
      required: ["summary"],
    });
    expect(Object.isFrozen(DEFAULT_OUTPUT_SCHEMA.properties!["artifacts"])).toBe(true);
  });

  it.each([
    [{ summary: "done" }, []],
    [{ summary: "done", artifacts: ["a.ts"], notes: "n", extra: 1 }, []],
    [{}, ['$: missing required field "summary"']],
    [{ summary: 3 }, ["$.summary: expected string, got number"]],
    [{ summary: "s", artifacts: ["a", "b", 2] }, ["$.artifacts[2]: expected string, got number"]],
    [{ summary: "s", artifacts: "a.ts" }, ["$.artifacts: expected array, got string"]],
    [{ summary: "s", notes: null }, ["$.notes: expected string, got null"]],
    [["summary"], ["$: expected object, got array: a handoff is a JSON object"]],
    [null, ["$: expected object, got null: a handoff is a JSON object"]],
    ["done", ["$: expected object, got string: a handoff is a JSON object"]],
  ])("%j → %j", (value, lines) => {
    const result = checkHandoff(value);
    if (lines.length === 0) expect(result).toEqual({ ok: true, handoff: value });
    else {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.text.split("\n")).toEqual(lines);
    }
  });
});

describe("the reference's output_schema keywords, as checked on a handoff", () => {
  const schema: OutputSchema = {
    type: "object",
    properties: {
      summary: { type: "string" },
      verdict: { type: "string", enum: ["approve", "changes_requested"] },
      score: { type: "integer" },
      ratio: { type: ["number", "null"] },
      findings: {
        type: "array",
        items: {
          type: "object",
          properties: { file: { type: "string" }, line: { type: "integer" } },
          required: ["file"],
          additionalProperties: false,
        },
      },
      "odd key": { type: "boolean" },
      tags: { enum: [["a"], { b: 1 }] },
    },
    required: ["summary", "verdict"],
    additionalProperties: false,
  };

  it.each([
    ["type", { summary: "s", verdict: "approve", score: 1.5 }, ["$.score: expected integer, got number"]],
    [
      "type (several)",
      { summary: "s", verdict: "approve", ratio: "x" },
      ["$.ratio: expected number or null, got string"],
    ],
    ["type (several) ok", { summary: "s", verdict: "approve", ratio: null }, []],
    [
      "properties",
      { summary: "s", verdict: "approve", "odd key": "yes" },
      ['$["odd key"]: expected boolean, got string'],
    ],
    ["required", { summary: "s" }, ['$: missing required field "verdict"']],
    [
      "items",
      { summary: "s", verdict: "approve", findings: [{ file: "a" }, { line: 2 }] },
      ['$.findings[1]: missing required field "file"'],
    ],
    [
      "items deep",
      { summary: "s", verdict: "approve", findings: [{ file: "a", line: "3" }] },
      ["$.findings[0].line: expected integer, got string"],
    ],
    [
      "enum",
      { summary: "s", verdict: "maybe" },
      ['$.verdict: expected one of "approve", "changes_requested", got "maybe"'],
    ],
    ["enum of structures", { summary: "s", verdict: "approve", tags: ["a"] }, []],
    [
      "enum of structures, no match",
      { summary: "s", verdict: "approve", tags: { b: 2 } },
      ['$.tags: expected one of ["a"], {"b":1}, got {"b":2}'],
    ],
    // An annotation only: extra fields are not rejected (the reference: do not rely on it).
    [
      "additionalProperties",
      { summary: "s", verdict: "approve", surprise: 1, findings: [{ file: "a", extra: true }] },
      [],
    ],
  ])("%s: %j → %j", (_keyword, value, lines) => {
    const result = checkHandoff(value, schema);
    expect(result.ok ? [] : result.text.split("\n")).toEqual(lines);
  });

  it("reports every problem, up to 50, then how many more", () => {
    const result = checkHandoff({ summary: "s", artifacts: Array.from({ length: 60 }, (_, i) => i) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(50);
    expect(result.omitted).toBe(10);
    expect(result.text.split("\n").at(-1)).toBe("… and 10 more");
    expect(result.problems[49]).toEqual({ path: "$.artifacts[49]", message: "expected string, got number" });
  });
});
