import { describe, expect, it } from "vitest";
import { noteOutputCap, renderConversation, reservedTokens, wouldOverflow } from "./compaction";

describe("compaction thresholds", () => {
  it("keeps room for the reply and a margin inside the window", () => {
    const model = { max_context_tokens: 200_000, max_output_tokens: 32_000 };
    expect(reservedTokens(model)).toBe(32_000 + 10_000);
    expect(wouldOverflow(150_000, model)).toBe(false);
    expect(wouldOverflow(160_000, model)).toBe(true);
    // an output cap as large as the window does not leave the window empty
    expect(reservedTokens({ max_context_tokens: 4000, max_output_tokens: 32_000 })).toBe(2000 + 400);
  });

  it("lowers the note's cap to the model's output cap", () => {
    expect(noteOutputCap(20_000, { max_output_tokens: 500 })).toBe(500);
    expect(noteOutputCap(300, { max_output_tokens: 500 })).toBe(300);
  });

  it("renders the conversation as text, keeping the task and the latest part when it is too long", () => {
    const messages = [
      { role: "user" as const, content: "TASK: fix the bug" },
      ...Array.from({ length: 50 }, (_, i) => ({
        role: "assistant" as const,
        content: `step ${i} ${"x".repeat(100)}`,
      })),
    ];
    const text = renderConversation(messages, 1200);
    expect(text.length).toBeLessThanOrEqual(1200);
    expect(text.startsWith("[user] TASK: fix the bug")).toBe(true);
    expect(text).toContain("earlier part of the conversation left out");
    expect(text.endsWith("x".repeat(100))).toBe(true);
    expect(text).toContain("step 49");
  });
});
