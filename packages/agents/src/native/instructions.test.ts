import { describe, expect, it } from "vitest";
import { buildInstructions } from "./instructions";

describe("buildInstructions", () => {
  it("orders profile instructions, memory, toolset texts and the node's suffix, leaving out empty parts", () => {
    const text = buildInstructions({
      profile: "You review.",
      memory: [{ path: "/w/AGENTS.md", content: "Run the tests.\n", tokens: 4 }],
      toolset: ["", "Skills: none."],
      suffix: "  Be brief. ",
    });
    expect(text).toBe(
      "You review.\n\n# Memory\n\nReference files loaded for this task:\n\n## /w/AGENTS.md\n\nRun the tests.\n\nSkills: none.\n\nBe brief.",
    );
    expect(buildInstructions({ profile: "", memory: [], toolset: [], suffix: null })).toBe("");
  });
});
