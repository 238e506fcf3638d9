import { describe, expect, it } from "vitest";
import { readAnthropicPrompt } from "./anthropic-request";
import { readOpenAIPrompt } from "./openai-request";
import { contentText, emptyPrompt, lastUserText, PromptSchema, parseArguments, toolResults } from "./prompt";

describe("readOpenAIPrompt", () => {
  it("reads instructions, messages, tool calls with parsed arguments, tool results, tools and the cap", () => {
    const prompt = readOpenAIPrompt({
      messages: [
        { role: "system", content: "Be terse." },
        { role: "developer", content: [{ type: "text", text: "Cite lines." }] },
        { role: "user", content: "first" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } },
            { id: "c2", type: "function", function: { name: "cat", arguments: "not json" } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "result one" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "result two" }] },
        { role: "assistant", content: "done" },
        {
          role: "user",
          content: [{ type: "text", text: "second " }, { type: "image_url" }, { type: "text", text: "part" }],
        },
      ],
      tools: [{ type: "function", function: { name: "ls", parameters: {} } }],
      max_tokens: 700,
    });
    expect(PromptSchema.parse(prompt)).toEqual(prompt);
    expect(prompt).toEqual({
      instructions: ["Be terse.", "Cite lines."],
      items: [
        { type: "message", role: "user", text: "first" },
        { type: "tool_call", id: "c1", name: "ls", arguments: { path: "." } },
        { type: "tool_call", id: "c2", name: "cat", arguments: "not json" },
        { type: "tool_result", toolCallId: "c1", content: "result one", isError: false },
        { type: "tool_result", toolCallId: "c2", content: "result two", isError: false },
        { type: "message", role: "assistant", text: "done" },
        { type: "message", role: "user", text: "second part" },
      ],
      tools: ["ls"],
      maxOutputTokens: 700,
    });
    expect(readOpenAIPrompt({ messages: [], max_completion_tokens: 9 }).maxOutputTokens).toBe(9);
  });

  it("skips what is not a message and reads nothing from a body without messages", () => {
    expect(readOpenAIPrompt({ messages: [42, { content: "no role" }] })).toEqual(emptyPrompt());
    expect(readOpenAIPrompt({})).toEqual(emptyPrompt());
  });
});

describe("readAnthropicPrompt", () => {
  it("reads system blocks, text, tool_use input as sent and tool_result blocks with is_error", () => {
    const prompt = readAnthropicPrompt({
      system: [
        { type: "text", text: "Be terse." },
        { type: "text", text: "Cite lines." },
      ],
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "t1", name: "ls", input: { path: "." } },
          ],
        },
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
            { type: "text", text: "and " },
            { type: "text", text: "more" },
          ],
        },
      ],
      tools: [{ name: "ls", input_schema: {} }],
      max_tokens: 1000,
    });
    expect(prompt).toEqual({
      instructions: ["Be terse.", "Cite lines."],
      items: [
        { type: "message", role: "user", text: "go" },
        { type: "message", role: "assistant", text: "Looking." },
        { type: "tool_call", id: "t1", name: "ls", arguments: { path: "." } },
        { type: "tool_result", toolCallId: "t1", content: "fine", isError: false },
        { type: "tool_result", toolCallId: "t2", content: "bad", isError: true },
        { type: "message", role: "user", text: "and more" },
      ],
      tools: ["ls"],
      maxOutputTokens: 1000,
    });
    expect(readAnthropicPrompt({ system: "one string", messages: [] }).instructions).toEqual(["one string"]);
  });
});

describe("lastUserText and toolResults", () => {
  const prompt = readOpenAIPrompt({
    messages: [
      { role: "user", content: "first" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", function: { name: "x", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "out" },
      { role: "user", content: "second" },
    ],
  });

  it("read the last user message and every tool result", () => {
    expect(lastUserText({ prompt })).toBe("second");
    expect(toolResults({ prompt })).toEqual([{ toolCallId: "c1", content: "out", isError: false }]);
  });

  it("find nothing in a prompt the double could not read", () => {
    expect(lastUserText({ prompt: emptyPrompt() })).toBeNull();
    expect(toolResults({ prompt: emptyPrompt() })).toEqual([]);
  });
});

describe("contentText and parseArguments", () => {
  it("join the text parts of every format and skip the rest", () => {
    expect(
      contentText([
        { type: "input_text", text: "a" },
        { type: "output_text", text: "b" },
        { type: "text", text: "c" },
        { type: "input_image", image_url: "x" },
        "stray",
      ]),
    ).toBe("abc");
    expect(contentText(null)).toBe("");
    expect(parseArguments('{"a":1}')).toEqual({ a: 1 });
    expect(parseArguments("{broken")).toBe("{broken");
  });
});
