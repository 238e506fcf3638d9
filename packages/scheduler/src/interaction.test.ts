import { describe, expect, it } from "vitest";
import { cutText, SUMMARY_LIMIT, summarizeQuestions, summarizeResponse } from "./interaction";

describe("question and answer summaries", () => {
  it("summarizes questions with headers and option labels", () => {
    const summary = summarizeQuestions({
      questions: [
        {
          question: "Which areas?",
          header: "Areas",
          options: [
            { label: "API", description: "" },
            { label: "UI", description: "x" },
          ],
          multi_select: true,
        },
        { question: "Deploy now?", header: "", options: [], multi_select: false },
      ],
    });
    expect(summary).toBe("Areas: Which areas? [API | UI]; Deploy now?");
  });

  it("summarizes each answer shape of the spec's table", () => {
    const summary = summarizeResponse({
      status: "answered",
      answers: [
        { selected: ["API", "UI"], text: "" },
        { selected: ["API"], text: "and docs" },
        { selected: [], text: "my own answer" },
        { selected: [], text: "" },
      ],
    });
    expect(summary).toBe("API, UI; API — and docs; my own answer; (skipped)");
    expect(summarizeResponse({ status: "unavailable" })).toBe("(unavailable)");
  });

  it(`cuts to ${SUMMARY_LIMIT} characters, counting code points, not UTF-16 units`, () => {
    expect(cutText("short")).toBe("short");
    const emoji = "😀".repeat(600);
    const cut = cutText(emoji);
    expect(Array.from(cut)).toHaveLength(512);
    expect(cut.endsWith("😀…")).toBe(true);
    // 300 emoji are 600 UTF-16 units but only 300 characters: not cut.
    expect(cutText("😀".repeat(300))).toBe("😀".repeat(300));
  });
});
