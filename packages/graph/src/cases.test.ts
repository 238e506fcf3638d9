import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CaseSchema, caseFile, definitionFromOps } from "../test/ops";
import { GRAPH_RULES, type GraphRuleId } from "./rules/rule";
import { validateDefinition } from "./validate";

// The table shared with the Python builder's tests (python/tests), which replay the same operations
// through the real WorkflowBuilder and expect the same rule.
const cases = z
  .array(CaseSchema)
  .parse(JSON.parse(readFileSync(new URL("../../../fixtures/graphs/cases.json", import.meta.url), "utf8")));

const rulePrefix = /^([a-z_]+): /;

function ruleOf(message: string): string | null {
  return rulePrefix.exec(message)?.[1] ?? null;
}

describe("fixtures/graphs/cases.json", () => {
  it("is a table of at least 30 uniquely named cases, each expecting ok or a known rule", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    for (const c of cases) expect(["ok", ...GRAPH_RULES]).toContain(c.expect);
  });

  it("covers every rule the Python builder can reach with valid handles", () => {
    const unreachableFromPython: GraphRuleId[] = ["unknown_node", "switch_cases", "schema"];
    const expected = GRAPH_RULES.filter((rule) => !unreachableFromPython.includes(rule));
    const covered = new Set(cases.map((c) => c.expect));
    expect(expected.filter((rule) => !covered.has(rule))).toEqual([]);
    expect(covered.has("ok")).toBe(true);
  });

  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const { definition, diagnostics } = validateDefinition(definitionFromOps(c.name, c.ops));
    const errors = diagnostics.filter((d) => d.severity === "error");
    if (c.expect === "ok") {
      expect(errors).toEqual([]);
      expect(definition).not.toBeNull();
      return;
    }
    expect(errors.length).toBeGreaterThan(0);
    expect([...new Set(errors.map((d) => ruleOf(d.message)))]).toEqual([c.expect]);
    for (const error of errors) {
      expect(error).toMatchObject({ code: "manifest_invalid", stage: "graph", file: caseFile(c.name) });
      expect(error.line).toEqual(expect.any(Number));
      expect(error.hint).toEqual(expect.any(String));
    }
  });
});
