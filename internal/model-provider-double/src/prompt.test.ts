import { describe, expect, it } from "vitest";
import { lastUserText, toolResults } from "./prompt";

describe("lastUserText", () => {
  it("reads the last user message, as a string or as text parts, in both formats", () => {
    const body = {
      messages: [
        { role: "user", content: "first" },
        { role: "assistant", content: "answer" },
        {
          role: "user",
          content: [{ type: "text", text: "second " }, { type: "image" }, { type: "text", text: "part" }],
        },
      ],
    };
    expect(lastUserText({ wire: "openai", body })).toBe("second part");
    expect(lastUserText({ wire: "anthropic", body })).toBe("second part");
  });

  it("is null without a user message or a messages array", () => {
    expect(
      lastUserText({ wire: "openai", body: { messages: [{ role: "system", content: "s" }] } }),
    ).toBeNull();
    expect(lastUserText({ wire: "anthropic", body: null })).toBeNull();
  });
});

describe("toolResults", () => {
  it("reads OpenAI tool messages", () => {
    const body = {
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1" }] },
        { role: "tool", tool_call_id: "c1", content: "result one" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "result two" }] },
      ],
    };
    expect(toolResults({ wire: "openai", body })).toEqual([
      { toolCallId: "c1", content: "result one", isError: false },
      { toolCallId: "c2", content: "result two", isError: false },
    ]);
  });

  it("reads Anthropic tool_result blocks, errors flagged", () => {
    const body = {
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "fine" },
            {
              type: "tool_result",
              tool_use_id: "t2",
              content: [{ type: "text", text: "bad" }],
              is_error: true,
            },
            { type: "text", text: "and more" },
          ],
        },
      ],
    };
    expect(toolResults({ wire: "anthropic", body })).toEqual([
      { toolCallId: "t1", content: "fine", isError: false },
      { toolCallId: "t2", content: "bad", isError: true },
    ]);
  });

  it("finds none for a request to a path the double does not serve", () => {
    expect(
      toolResults({ wire: null, body: { messages: [{ role: "tool", tool_call_id: "c", content: "x" }] } }),
    ).toEqual([]);
  });
});
