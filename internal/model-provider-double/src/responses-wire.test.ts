import { describe, expect, it } from "vitest";
import { text, toolCalls } from "./replies";
import { outputItems, responsesWire } from "./responses-wire";
import type { RenderContext } from "./wire";

const context: RenderContext = {
  seq: 7,
  model: "gpt-double",
  usage: { inputTokens: 10, outputTokens: 4 },
  includeUsage: false,
  created: 1_700_000_000,
};

type Event = { type: string; sequence_number: number } & Record<string, unknown>;

/** Parses named SSE frames, checking that each event line names the type its data carries. */
function parse(frames: string[]): Event[] {
  return frames.map((frame) => {
    const match = /^event: (\S+)\ndata: (.*)\n\n$/s.exec(frame);
    expect(match).not.toBeNull();
    const data = JSON.parse(match![2]!) as Event;
    expect(data.type).toBe(match![1]);
    return data;
  });
}

const reply = toolCalls(
  [
    { name: "weather", arguments: { city: "Paris" } },
    { name: "clock", arguments: {}, id: "given-id" },
  ],
  { text: "One moment." },
);

const usage = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 4,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 14,
};

describe("responses wire: message", () => {
  it("puts the text in a message item, then one function_call item per call, with usage and its details", () => {
    expect(JSON.parse(responsesWire.message(reply, context, true))).toEqual({
      id: "resp_double_7",
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      error: null,
      incomplete_details: null,
      model: "gpt-double",
      output: [
        {
          type: "message",
          id: "msg_double_7",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "One moment.", annotations: [], logprobs: [] }],
        },
        {
          type: "function_call",
          id: "fc_double_7_0",
          call_id: "call_7_0",
          name: "weather",
          arguments: '{"city":"Paris"}',
          status: "completed",
        },
        {
          type: "function_call",
          id: "fc_double_7_1",
          call_id: "given-id",
          name: "clock",
          arguments: "{}",
          status: "completed",
        },
      ],
      usage,
    });
  });

  it("has no message item for calls without text, and is in_progress without usage when unfinished", () => {
    const calls = JSON.parse(responsesWire.message(toolCalls([{ name: "x", arguments: {} }]), context, true));
    expect(calls.output.map((item: { type: string }) => item.type)).toEqual(["function_call"]);
    const unfinished = JSON.parse(responsesWire.message(text("hi"), context, false));
    expect(unfinished).toMatchObject({ status: "in_progress", usage: null });
    expect(unfinished.output[0].content[0].text).toBe("hi");
  });
});

describe("responses wire: events", () => {
  it("streams the response's life in order, numbered, with the text and arguments in several deltas", () => {
    const events = parse(responsesWire.events(reply, context, true));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, index) => index));
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.at(-1)).toBe("response.completed");
    expect(types.filter((t) => t === "response.output_item.added")).toHaveLength(3);
    expect(types.filter((t) => t === "response.output_item.done")).toHaveLength(3);
    expect(events[0]).toMatchObject({
      response: { id: "resp_double_7", status: "in_progress", output: [], usage: null, model: "gpt-double" },
    });

    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e["delta"]).join("")).toBe("One moment.");
    expect(deltas[0]).toMatchObject({ item_id: "msg_double_7", output_index: 0, content_index: 0 });
    expect(events.find((e) => e.type === "response.output_text.done")).toMatchObject({ text: "One moment." });

    const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e["item"]);
    expect(added[1]).toEqual({
      type: "function_call",
      id: "fc_double_7_0",
      call_id: "call_7_0",
      name: "weather",
      arguments: "",
      status: "in_progress",
    });
    for (const [index, call] of reply.calls.entries()) {
      const id = `fc_double_7_${index}`;
      const parts = events.filter(
        (e) => e.type === "response.function_call_arguments.delta" && e["item_id"] === id,
      );
      expect(parts.every((e) => e["output_index"] === index + 1)).toBe(true);
      expect(JSON.parse(parts.map((e) => e["delta"]).join(""))).toEqual(call.arguments);
      const done = events.find(
        (e) => e.type === "response.function_call_arguments.done" && e["item_id"] === id,
      );
      expect(done).toMatchObject({ arguments: JSON.stringify(call.arguments) });
    }
    expect(events.filter((e) => e.type === "response.function_call_arguments.delta").length).toBeGreaterThan(
      2,
    );

    const completed = events.at(-1)!;
    expect(completed["response"]).toEqual(JSON.parse(responsesWire.message(reply, context, true)));
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e["item"]);
    expect(done).toEqual(outputItems(reply, context));
  });

  it("leaves out response.completed when unfinished, and sends no [DONE]", () => {
    const frames = responsesWire.events(text("a b c"), context, false);
    const types = parse(frames).map((e) => e.type);
    expect(types).not.toContain("response.completed");
    expect(types.at(-1)).toBe("response.output_item.done");
    expect(frames.join("")).not.toContain("[DONE]");
  });
});

describe("responses wire: errors", () => {
  const errorContext = {
    seq: 3,
    promptTokens: 50,
    headers: { authorization: "Bearer sk-proj-1234567890wxyz" },
  };

  it("answers a context overflow in the Responses API's words, naming no limit", () => {
    const answer = responsesWire.error({ type: "context_overflow", limit: 8192 }, errorContext);
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatchObject({
      "content-type": "application/json",
      "x-request-id": "req_double_3",
    });
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        message:
          "Your input exceeds the context window of this model. Please adjust your input and try again.",
        type: "invalid_request_error",
        param: "input",
        code: "context_length_exceeded",
      },
    });
  });

  it.each([
    [{ type: "rate_limited", retryAfterMs: 5 } as const, 429, "rate_limit_exceeded"],
    [{ type: "quota_exhausted" } as const, 429, "insufficient_quota"],
    [{ type: "invalid_key" } as const, 401, "invalid_api_key"],
    [{ type: "server_error" } as const, 500, null],
  ])("answers %o with status %i and code %s, as Chat Completions does", (reply, status, code) => {
    const answer = responsesWire.error(reply, errorContext);
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body).error.code).toBe(code);
  });

  it("keeps the retry headers of a 429", () => {
    expect(
      responsesWire.error({ type: "rate_limited", retryAfterMs: 5 }, errorContext).headers,
    ).toMatchObject({
      "retry-after-ms": "5",
    });
  });
});
