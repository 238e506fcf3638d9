import { describe, expect, it } from "vitest";
import { text, toolCalls } from "./replies";
import { estimatePromptTokens, estimateTokens, usageFor } from "./usage";

describe("usage", () => {
  it("uses the reply's own numbers when it has them", () => {
    expect(usageFor(text("x", { usage: { inputTokens: 3, outputTokens: 9 } }), {})).toEqual({
      inputTokens: 3,
      outputTokens: 9,
    });
  });

  it("estimates about four characters a token, at least one", () => {
    expect(estimateTokens("")).toBe(1);
    expect(estimateTokens("12345678")).toBe(2);
    expect(estimateTokens("123456789")).toBe(3);
    const body = { system: "be brief", messages: [{ role: "user", content: "hi" }] };
    expect(usageFor(toolCalls([{ name: "ls", arguments: { a: 1 } }], { text: "ok" }), body)).toEqual({
      inputTokens: estimatePromptTokens(body),
      outputTokens: estimateTokens('okls{"a":1}'),
    });
    expect(estimatePromptTokens(body)).toBeGreaterThan(estimatePromptTokens({ messages: [] }));
  });

  it("reads a Responses body's instructions and input as it reads system and messages", () => {
    const messages = [{ role: "user", content: "hi" }];
    expect(estimatePromptTokens({ instructions: "be brief", input: messages })).toBe(
      estimatePromptTokens({ system: "be brief", messages }),
    );
    expect(estimatePromptTokens({ input: messages })).toBeGreaterThan(estimatePromptTokens({}));
  });
});
