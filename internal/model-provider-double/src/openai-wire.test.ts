import { describe, expect, it } from "vitest";
import { openaiWire } from "./openai-wire";
import { text, toolCalls } from "./replies";
import type { RenderContext } from "./wire";

const context: RenderContext = {
  seq: 7,
  model: "gpt-double",
  usage: { inputTokens: 10, outputTokens: 4 },
  includeUsage: true,
  created: 1_700_000_000,
};

function data(frames: string[]): unknown[] {
  return frames.map((frame) => {
    expect(frame).toMatch(/^data: .*\n\n$/s);
    const payload = frame.slice("data: ".length, -2);
    return payload === "[DONE]" ? "[DONE]" : JSON.parse(payload);
  });
}

const reply = toolCalls(
  [
    { name: "weather", arguments: { city: "Paris" } },
    { name: "clock", arguments: {}, id: "given-id" },
  ],
  { text: "One moment." },
);

describe("openai wire: message", () => {
  it("puts text, tool calls (arguments as a JSON string), finish reason and usage in one completion", () => {
    expect(JSON.parse(openaiWire.message(reply, context, true))).toEqual({
      id: "chatcmpl-double-7",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "gpt-double",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "One moment.",
            tool_calls: [
              {
                id: "call_7_0",
                type: "function",
                function: { name: "weather", arguments: '{"city":"Paris"}' },
              },
              { id: "given-id", type: "function", function: { name: "clock", arguments: "{}" } },
            ],
          },
          logprobs: null,
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
    });
  });

  it("leaves content null for calls without text, and finish_reason null when unfinished", () => {
    const body = JSON.parse(openaiWire.message(toolCalls([{ name: "x", arguments: {} }]), context, false));
    expect(body.choices[0]).toMatchObject({ message: { content: null }, finish_reason: null });
    expect(JSON.parse(openaiWire.message(text("hi"), context, true)).choices[0]).toMatchObject({
      message: { role: "assistant", content: "hi" },
      finish_reason: "stop",
    });
  });
});

describe("openai wire: events", () => {
  it("streams a role chunk, text deltas, tool-call deltas by index, the finish, usage, then [DONE]", () => {
    const chunks = data(openaiWire.events(reply, context, true)) as Array<{
      choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>;
      usage?: unknown;
    }>;
    expect(chunks.at(-1)).toBe("[DONE]");
    const deltas = chunks.slice(0, -2).map((chunk) => chunk.choices[0]);
    expect(deltas[0]).toMatchObject({ delta: { role: "assistant", content: "" }, finish_reason: null });
    expect(
      deltas.flatMap((d) => (typeof d?.delta["content"] === "string" ? [d.delta["content"]] : [])).join(""),
    ).toBe("One moment.");

    const toolDeltas = deltas.flatMap(
      (d) => (d?.delta["tool_calls"] as Array<Record<string, unknown>>) ?? [],
    );
    const first = toolDeltas.filter((d) => d["id"] !== undefined);
    expect(first).toEqual([
      {
        index: 0,
        id: "call_7_0",
        type: "function",
        function: { name: "weather", arguments: expect.any(String) },
      },
      {
        index: 1,
        id: "given-id",
        type: "function",
        function: { name: "clock", arguments: expect.any(String) },
      },
    ]);
    for (const index of [0, 1]) {
      const joined = toolDeltas
        .filter((d) => d["index"] === index)
        .map((d) => (d["function"] as { arguments: string }).arguments)
        .join("");
      expect(JSON.parse(joined)).toEqual(reply.calls[index]!.arguments);
    }
    expect(toolDeltas.filter((d) => d["index"] === 0).length).toBeGreaterThan(1);

    expect(deltas.at(-1)).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" });
    expect(chunks.at(-2)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
    });
  });

  it("sends no usage chunk without include_usage, and no finish chunk when unfinished", () => {
    const plain = data(openaiWire.events(text("a b c"), { ...context, includeUsage: false }, true));
    expect(plain.filter((chunk) => typeof chunk === "object" && chunk !== null && "usage" in chunk)).toEqual(
      [],
    );
    const unfinished = data(openaiWire.events(text("a b c"), context, false)) as Array<
      { choices: Array<{ finish_reason: string | null }> } | "[DONE]"
    >;
    expect(unfinished.at(-1)).toBe("[DONE]");
    const reasons = unfinished.flatMap((chunk) =>
      chunk === "[DONE]" ? [] : chunk.choices.map((c) => c.finish_reason),
    );
    expect(reasons.every((reason) => reason === null)).toBe(true);
  });
});

describe("openai wire: errors", () => {
  const errorContext = {
    seq: 3,
    promptTokens: 50,
    headers: { authorization: "Bearer sk-proj-1234567890wxyz" },
  };

  it("redacts the key it names, as OpenAI does", () => {
    const answer = openaiWire.error({ type: "invalid_key" }, errorContext);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        message: "Incorrect API key provided: sk-***wxyz.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    });
  });

  it("adds retry headers to a 429 and the reply's own headers to an http_error", () => {
    const limited = openaiWire.error(
      {
        type: "rate_limited",
        retryAfterSeconds: 3,
        retryAfterMs: 2500,
        retryAfterDate: "Wed, 02 Jan 2030 03:04:05 GMT",
      },
      errorContext,
    );
    expect(limited.headers).toMatchObject({
      "retry-after": "Wed, 02 Jan 2030 03:04:05 GMT",
      "retry-after-ms": "2500",
    });
    const custom = openaiWire.error(
      { type: "http_error", status: 418, message: "teapot", headers: { "x-a": "1" } },
      errorContext,
    );
    expect(custom).toMatchObject({ status: 418, headers: { "x-a": "1", "x-request-id": "req_double_3" } });
    expect(JSON.parse(custom.body).error).toMatchObject({ type: "invalid_request_error", code: null });
  });

  it("reports the larger of the prompt estimate and limit + 1 for a context overflow", () => {
    const small = JSON.parse(openaiWire.error({ type: "context_overflow", limit: 10 }, errorContext).body);
    expect(small.error.message).toContain("resulted in 50 tokens");
    const large = JSON.parse(openaiWire.error({ type: "context_overflow", limit: 8192 }, errorContext).body);
    expect(large.error.message).toContain(
      "maximum context length is 8192 tokens. However, your messages resulted in 8193 tokens",
    );
  });
});
