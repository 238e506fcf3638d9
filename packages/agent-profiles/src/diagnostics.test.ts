import { DiagnosticSchema } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { agent } from "../test/fixtures";
import { selectionDiagnostic } from "./diagnostics";
import { matchProfile } from "./match";

describe("selection failures as bindings diagnostics", () => {
  it("keeps the code and hint, places it at the node, and lists candidates as notes", () => {
    const found = matchProfile(
      { profiles: [agent({ name: "A", display_name: "X" }), agent({ name: "B", display_name: "X" })] },
      "X",
    );
    if (found.ok) throw new Error("expected an ambiguous match");
    const d = selectionDiagnostic(found, { node: "review", file: "/w/flow.py", line: 3, column: 5 });
    expect(DiagnosticSchema.parse(d)).toEqual(d);
    expect(d).toMatchObject({
      code: "agent_profile_ambiguous",
      stage: "bindings",
      severity: "error",
      node: "review",
      file: "/w/flow.py",
      line: 3,
      column: 5,
      hint: found.hint,
    });
    expect(d.message).toMatch(/^agent node 'review': profile "X" matches 2 agent profiles by display name/u);
    expect(d.notes).toHaveLength(2);
  });
});
