import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { SELECTION_CODES } from "./match";
import { CONFIG_PROBLEM_CODES, ConfigProblemSchema, describeValue } from "./problems";

describe("problem codes", () => {
  it("every code has a heading in docs/errors.md under Agent profiles and models", async () => {
    const doc = await readFile(new URL("../../../docs/errors.md", import.meta.url), "utf8");
    const start = doc.indexOf("\n# Agent profiles and models\n");
    const next = doc.indexOf("\n# ", start + 1);
    const section = doc.slice(start, next === -1 ? undefined : next);
    expect(section.length).toBeGreaterThan(100);
    const headings = [...section.matchAll(/^## `([a-z_]+)`$/gmu)].map((m) => m[1]);
    expect(headings.sort()).toEqual(
      [...CONFIG_PROBLEM_CODES, ...SELECTION_CODES, "config_options_invalid"].sort(),
    );
  });

  it("the problem shape has a closed code list and 1-based lines", () => {
    const ok = {
      code: "config_unknown_key",
      severity: "warning",
      file: "/f",
      line: 1,
      field: "x",
      message: "m",
    };
    expect(ConfigProblemSchema.parse(ok)).toEqual(ok);
    expect(ConfigProblemSchema.safeParse({ ...ok, code: "nope" }).success).toBe(false);
    expect(ConfigProblemSchema.safeParse({ ...ok, line: 0 }).success).toBe(false);
  });

  it.each([
    [null, "null"],
    [[1], "a list"],
    [{ a: 1 }, "a mapping"],
    ["on", '"on" (a string)'],
    [true, "true (a boolean)"],
    [1.5, "1.5 (a number)"],
  ])("describes %j as %s", (value, text) => {
    expect(describeValue(value)).toBe(text);
  });
});
