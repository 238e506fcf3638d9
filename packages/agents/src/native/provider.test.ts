import { describe, expect, it } from "vitest";
import { splitChatOptions } from "./provider";

describe("splitChatOptions", () => {
  it("sends request fields as written, extra_body last, and keeps the engine's own fields", () => {
    expect(
      splitChatOptions({
        temperature: 0.2,
        reasoning_effort: "high",
        extra_body: { top_k: 5, temperature: 0.1, messages: [] },
        extra_headers: { "X-A": "1", "X-N": 2 },
        extra_query: { "api-version": "2024-10-01" },
        stream: false,
        model: "other",
      }),
    ).toEqual({
      body: { temperature: 0.1, reasoning_effort: "high", top_k: 5 },
      headers: { "X-A": "1", "X-N": "2" },
      query: { "api-version": "2024-10-01" },
    });
  });
});
