import { describe, expect, it } from "vitest";
import { promptText } from "./run-attempt";

describe("promptText", () => {
  it("appends instructions_suffix after a blank line", () => {
    expect(promptText("Review a.ts", "Be brief.")).toBe("Review a.ts\n\nBe brief.");
  });

  it("is the input alone without a suffix, and the suffix alone without input", () => {
    expect(promptText("Review a.ts", null)).toBe("Review a.ts");
    expect(promptText("Review a.ts", "  ")).toBe("Review a.ts");
    expect(promptText("", "Be brief.")).toBe("Be brief.");
  });
});
