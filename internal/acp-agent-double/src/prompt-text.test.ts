import { describe, expect, it } from "vitest";
import { promptText } from "./prompt-text";

describe("promptText", () => {
  it("joins text, embedded text resources and marks for other blocks", () => {
    expect(
      promptText([
        { type: "text", text: "Review this:" },
        { type: "resource", resource: { uri: "file:///a.ts", text: "const a = 1;" } },
        { type: "resource_link", uri: "file:///b.ts", name: "b.ts" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ]),
    ).toBe("Review this:\nconst a = 1;\n[resource_link file:///b.ts]\n[image]");
  });
});
