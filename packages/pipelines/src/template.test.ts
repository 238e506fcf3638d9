import { describe, expect, it } from "vitest";
import { renderPrompt, scanTemplate } from "./template";

const UPSTREAM = {
  plan: { summary: "three steps", steps: ["a", "b"], count: 2, ok: true, none: null, notes: "n" },
  review: { summary: "two bugs", verdict: "changes_requested" },
  far: { summary: "an ancestor two levels up" },
  empty: { summary: "" },
};
const context = {
  task: "fix the login bug",
  node: { depends_on: ["plan", "review", "empty"] },
  upstream: UPSTREAM,
};

describe("the reference's template variables", () => {
  it.each([
    ["{{task}}", "fix the login bug"],
    ["{{upstream.plan.summary}}", "three steps"],
    ["{{upstream.plan.json}}", JSON.stringify(UPSTREAM.plan, null, 2)],
    ["{{upstream.review.verdict}}", "changes_requested"],
    ["{{upstream_summaries}}", "plan: three steps\n\nreview: two bugs\n\nempty: (no summary)"],
    // Non-string fields are rendered as JSON; a missing field as "".
    ["{{upstream.plan.steps}}", '[\n  "a",\n  "b"\n]'],
    ["{{upstream.plan.count}}", "2"],
    ["{{upstream.plan.ok}}", "true"],
    ["{{upstream.plan.none}}", "null"],
    ["{{upstream.plan.missing}}", ""],
    ["{{upstream.plan.constructor}}", ""],
    // Spaces inside the braces are allowed.
    ["{{ task }}", "fix the login bug"],
    // Only direct dependencies are rendered; everything else stays exactly as written.
    ["{{upstream.far.summary}}", "{{upstream.far.summary}}"],
    ["{{upstream.nobody.summary}}", "{{upstream.nobody.summary}}"],
    ["{{upstream.plan}}", "{{upstream.plan}}"],
    ["{{project}}", "{{project}}"],
    ["{{TASK}}", "{{TASK}}"],
    ['{{"a": 1}}', '{{"a": 1}}'],
    ["{task}", "{task}"],
    ["{{{task}}}", "{fix the login bug}"],
  ])("%s → %j", (template, expected) => {
    expect(renderPrompt(template, context)).toBe(expected);
  });

  it("leaves variables of a direct dependency without a handoff as written", () => {
    const text = renderPrompt("{{upstream.plan.summary}} / {{upstream_summaries}}", {
      task: "t",
      node: { depends_on: ["plan", "late"] },
      upstream: { plan: { summary: "s" } },
    });
    expect(text).toBe("s / plan: s");
    expect(
      renderPrompt("{{upstream.late.summary}}", { task: "t", node: { depends_on: ["late"] }, upstream: {} }),
    ).toBe("{{upstream.late.summary}}");
  });

  it("renders {{upstream_summaries}} as empty without direct dependencies, and lists each dependency once", () => {
    expect(
      renderPrompt("[{{upstream_summaries}}]", { task: "t", node: { depends_on: [] }, upstream: UPSTREAM }),
    ).toBe("[]");
    expect(
      renderPrompt("{{upstream_summaries}}", {
        task: "t",
        node: { depends_on: ["review", "review"] },
        upstream: UPSTREAM,
      }),
    ).toBe("review: two bugs");
  });

  it("renders in one pass: text brought in by the task or a handoff is not rendered again", () => {
    const text = renderPrompt("{{task}} | {{upstream.a.summary}}", {
      task: "{{upstream.a.summary}}",
      node: { depends_on: ["a"] },
      upstream: { a: { summary: "{{task}}" } },
    });
    expect(text).toBe("{{upstream.a.summary}} | {{task}}");
  });

  it("scans variables with their offsets and kinds", () => {
    expect(scanTemplate("a {{task}} {{upstream.x.y}} {{zz}} {{ 1 + 2 }}")).toEqual([
      { offset: 2, length: 8, raw: "{{task}}", kind: "task" },
      { offset: 11, length: 16, raw: "{{upstream.x.y}}", kind: "upstream", node: "x", field: "y" },
      { offset: 28, length: 6, raw: "{{zz}}", kind: "unknown", name: "zz" },
    ]);
  });
});
