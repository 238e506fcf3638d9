import { describe, expect, it } from "vitest";
import { PromptSchema } from "./prompt";
import { type ItemLookup, readResponsesRequest, type StoredItem } from "./responses-request";

const nothingStored: ItemLookup = () => undefined;

function storeOf(items: Record<string, StoredItem>): ItemLookup {
  return (id) => items[id];
}

/** The input `@ai-sdk/openai` sends for a tool round trip (no `type` on messages, user text as parts). */
const roundTrip = [
  { role: "system", content: "Be brief." },
  { role: "user", content: [{ type: "input_text", text: "Review the change." }] },
  { role: "assistant", content: [{ type: "output_text", text: "Looking." }] },
  { type: "function_call", call_id: "call_1_0", name: "write_note", arguments: '{"note":"r1"}' },
  { type: "function_call_output", call_id: "call_1_0", output: 'wrote "r1"' },
];

describe("readResponsesRequest", () => {
  it("reads instructions, messages, calls, outputs, function tools and max_output_tokens", () => {
    const { prompt, refusal } = readResponsesRequest(
      {
        model: "gpt-x",
        instructions: "From the field.",
        input: [...roundTrip, { type: "message", role: "developer", content: "Late rule." }],
        tools: [
          { type: "function", name: "write_note", parameters: {}, strict: false },
          { type: "web_search" },
        ],
        max_output_tokens: 700,
      },
      nothingStored,
    );
    expect(refusal).toBeNull();
    expect(PromptSchema.parse(prompt)).toEqual(prompt);
    expect(prompt).toEqual({
      instructions: ["From the field.", "Be brief.", "Late rule."],
      items: [
        { type: "message", role: "user", text: "Review the change." },
        { type: "message", role: "assistant", text: "Looking." },
        { type: "tool_call", id: "call_1_0", name: "write_note", arguments: { note: "r1" } },
        { type: "tool_result", toolCallId: "call_1_0", content: 'wrote "r1"', isError: false },
      ],
      tools: ["write_note", "web_search"],
      maxOutputTokens: 700,
    });
  });

  it("reads a string input as one user message, and output given as text parts", () => {
    expect(readResponsesRequest({ input: "hi" }, nothingStored).prompt.items).toEqual([
      { type: "message", role: "user", text: "hi" },
    ]);
    const parts = readResponsesRequest(
      {
        input: [
          { type: "function_call", call_id: "c", name: "n", arguments: "{}" },
          { type: "function_call_output", call_id: "c", output: [{ type: "input_text", text: "as parts" }] },
        ],
      },
      nothingStored,
    );
    expect(parts.prompt.items[1]).toEqual({
      type: "tool_result",
      toolCallId: "c",
      content: "as parts",
      isError: false,
    });
  });

  it("resolves an item_reference to the item stored under its id", () => {
    const lookup = storeOf({
      msg_1: {
        item: {
          type: "message",
          id: "msg_1",
          role: "assistant",
          content: [{ type: "output_text", text: "Stored." }],
        },
        persisted: true,
      },
    });
    const { prompt, refusal } = readResponsesRequest(
      {
        input: [
          { role: "user", content: "q" },
          { type: "item_reference", id: "msg_1" },
        ],
      },
      lookup,
    );
    expect(refusal).toBeNull();
    expect(prompt.items).toEqual([
      { type: "message", role: "user", text: "q" },
      { type: "message", role: "assistant", text: "Stored." },
    ]);
  });

  it("leaves items that are not messages, calls or outputs in the body only", () => {
    const { prompt, refusal } = readResponsesRequest(
      {
        input: [
          { type: "reasoning", id: "rs_1", summary: [] },
          { role: "user", content: "q" },
        ],
      },
      nothingStored,
    );
    expect(refusal).toBeNull();
    expect(prompt.items).toEqual([{ type: "message", role: "user", text: "q" }]);
  });

  it.each([
    {
      name: "a reference to an item never stored",
      body: { input: [{ type: "item_reference", id: "msg_9" }] },
      lookup: nothingStored,
      status: 404,
      message: "Item with id 'msg_9' not found.",
    },
    {
      name: "a reference to an item of a store: false response",
      body: { input: [{ type: "item_reference", id: "msg_2" }] },
      lookup: storeOf({ msg_2: { item: { role: "assistant", content: "x" }, persisted: false } }),
      status: 404,
      message: /^Item with id 'msg_2' not found\. Items are not persisted when `store` is set to false\./,
    },
    {
      name: "a tool output without its call",
      body: { input: [{ type: "function_call_output", call_id: "call_x", output: "r" }] },
      lookup: nothingStored,
      status: 400,
      message: "No tool call found for function call output with call_id call_x.",
    },
    {
      name: "a call without its output",
      body: { input: roundTrip.slice(0, 4) },
      lookup: nothingStored,
      status: 400,
      message: "No tool output found for function call call_1_0.",
    },
    {
      name: "a function_call_output without call_id",
      body: { input: [{ type: "function_call_output", output: "r" }] },
      lookup: nothingStored,
      status: 400,
      message: /^Invalid 'input\[0\]' \(a function_call_output\): call_id: /,
    },
    {
      name: "a message with an unknown role",
      body: { input: [{ role: "robot", content: "beep" }] },
      lookup: nothingStored,
      status: 400,
      message: /^Invalid 'input\[0\]' \(a message\): role: /,
    },
    {
      name: "an input that is neither a string nor items",
      body: { input: 42 },
      lookup: nothingStored,
      status: 400,
      message: "Invalid type for 'input': expected a string or an array of input items, but got number.",
    },
    {
      name: "previous_response_id",
      body: { previous_response_id: "resp_1", input: "more" },
      lookup: nothingStored,
      status: 400,
      message: /keeps no conversations: `previous_response_id` is not supported/,
    },
  ])("refuses $name, as OpenAI would", ({ body, lookup, status, message }) => {
    const { refusal } = readResponsesRequest(body, lookup);
    expect(refusal).toMatchObject({ type: "http_error", status, errorType: "invalid_request_error" });
    if (typeof message === "string") expect(refusal?.message).toBe(message);
    else expect(refusal?.message).toMatch(message);
  });
});
