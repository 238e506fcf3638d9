import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { builtinPipelines } from "./builtins";
import { scanTemplate } from "./template";
import { validatePipeline } from "./validate/validate";

describe("the built-in pipelines", () => {
  const builtins = builtinPipelines();

  it("are the three documented ones", () => {
    expect(builtins.map((b) => b.id)).toEqual([
      "builtin/docs-and-tests",
      "builtin/plan-implement-review",
      "builtin/review-fan-out",
    ]);
  });

  it.each(builtins.map((b) => [b.id, b] as const))("%s is valid, with no warning", async (_id, builtin) => {
    const text = await readFile(builtin.file, "utf8");
    const report = validatePipeline(text, builtin.file);
    expect(report.diagnostics).toEqual([]);
    expect(report.status).toBe("pass");
  });

  it("use their upstream handoffs and the task", () => {
    for (const { definition } of builtins) {
      for (const node of definition.nodes) {
        const kinds = scanTemplate(node.prompt_template).map((v) => v.kind);
        if (node.depends_on.length === 0) expect(kinds).toContain("task");
        else expect(kinds.some((k) => k === "upstream" || k === "upstream_summaries")).toBe(true);
      }
    }
  });

  it("include a fan-out with a join, an approval gate and a continued session", () => {
    const fanOut = builtins.find((b) => b.id === "builtin/review-fan-out")!.definition;
    const join = fanOut.nodes.find((n) => n.id === "report")!;
    expect(join.depends_on).toHaveLength(4);
    const plan = builtins.find((b) => b.id === "builtin/plan-implement-review")!.definition;
    expect(plan.nodes.find((n) => n.id === "implement")?.requires_approval).toBe(true);
    expect(plan.nodes.find((n) => n.id === "fix")?.reuse_session_of).toBe("implement");
  });

  it("are documented in docs/pipelines.md", async () => {
    const doc = await readFile(new URL("../../../docs/pipelines.md", import.meta.url), "utf8");
    for (const { id } of builtins) expect(doc).toContain(`\`${id}\``);
  });
});
