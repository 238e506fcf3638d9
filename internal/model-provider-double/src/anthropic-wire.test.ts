import { describe, expect, it } from "vitest";
import { anthropicWire } from "./anthropic-wire";
import { text, toolCalls } from "./replies";
import type { RenderContext } from "./wire";

const context: RenderContext = {
  seq: 4,
  model: "claude-double",
  usage: { inputTokens: 12, outputTokens: 6 },
  includeUsage: false,
  created: 1_700_000_000,
};

type Event = { name: string; data: Record<string, unknown> };

function parse(frames: string[]): Event[] {
  return frames.map((frame) => {
    const match = /^event: (\w+)\ndata: (.*)\n\n$/s.exec(frame);
    expect(match).not.toBeNull();
    const data = JSON.parse(match![2]!) as Record<string, unknown>;
    expect(data["type"]).toBe(match![1]);
    return { name: match![1]!, data };
  });
}

const reply = toolCalls([{ name: "weather", arguments: { city: "Paris" } }], { text: "Checking." });

describe("anthropic wire: message", () => {
  it("puts text and tool_use blocks, stop_reason and usage in one message", () => {
    expect(JSON.parse(anthropicWire.message(reply, context, true))).toEqual({
      id: "msg_double_4",
      type: "message",
      role: "assistant",
      model: "claude-double",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_4_0", name: "weather", input: { city: "Paris" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 6 },
    });
    expect(JSON.parse(anthropicWire.message(text("hi"), context, false))).toMatchObject({
      content: [{ type: "text", text: "hi" }],
      stop_reason: null,
    });
  });
});

describe("anthropic wire: events", () => {
  it("streams message_start, one block per part with its deltas, message_delta and message_stop", () => {
    const events = parse(anthropicWire.events(reply, context, true));
    const names = events.map((event) => event.name);
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(events[0]!.data).toMatchObject({
      message: { id: "msg_double_4", role: "assistant", usage: { input_tokens: 12 } },
    });

    const starts = events.filter((event) => event.name === "content_block_start").map((event) => event.data);
    expect(starts).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_4_0", name: "weather", input: {} },
      },
    ]);
    const deltas = (index: number) =>
      events
        .filter((event) => event.name === "content_block_delta" && event.data["index"] === index)
        .map((event) => event.data["delta"] as Record<string, string>);
    expect(deltas(0).every((delta) => delta["type"] === "text_delta")).toBe(true);
    expect(
      deltas(0)
        .map((delta) => delta["text"])
        .join(""),
    ).toBe("Checking.");
    expect(deltas(1).every((delta) => delta["type"] === "input_json_delta")).toBe(true);
    expect(
      JSON.parse(
        deltas(1)
          .map((delta) => delta["partial_json"])
          .join(""),
      ),
    ).toEqual({ city: "Paris" });
    expect(
      events.filter((event) => event.name === "content_block_stop").map((event) => event.data["index"]),
    ).toEqual([0, 1]);
    expect(events.at(-2)!.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 6 },
    });
  });

  it("leaves out message_delta and message_stop when unfinished", () => {
    const names = parse(anthropicWire.events(text("a b"), context, false)).map((event) => event.name);
    expect(names).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
    ]);
  });
});

describe("anthropic wire: errors", () => {
  const errorContext = { seq: 9, promptTokens: 20_000, headers: {} };

  it.each([
    [{ type: "overloaded" as const }, 529, "overloaded_error"],
    [{ type: "server_error" as const, status: 503 }, 503, "api_error"],
    [{ type: "quota_exhausted" as const }, 400, "invalid_request_error"],
    [{ type: "quota_exhausted" as const, anthropicShape: "billing_error" as const }, 402, "billing_error"],
    [
      { type: "quota_exhausted" as const, anthropicShape: "permission_error" as const },
      403,
      "permission_error",
    ],
    [{ type: "invalid_key" as const }, 401, "authentication_error"],
    [{ type: "http_error" as const, status: 413, message: "too big" }, 413, "request_too_large"],
    [{ type: "http_error" as const, status: 409, message: "conflict" }, 409, "invalid_request_error"],
  ])("answers %j with %i and %s in Anthropic's error body", (reply, status, type) => {
    const answer = anthropicWire.error(reply, errorContext);
    expect(answer.status).toBe(status);
    expect(answer.headers["request-id"]).toBe("req_double_9");
    expect(JSON.parse(answer.body)).toEqual({
      type: "error",
      error: { type, message: expect.any(String) },
      request_id: "req_double_9",
    });
  });

  it("names the prompt size and the limit of a context overflow", () => {
    const answer = anthropicWire.error({ type: "context_overflow", limit: 8192 }, errorContext);
    expect(JSON.parse(answer.body).error.message).toBe("prompt is too long: 20000 tokens > 8192 maximum");
  });
});
