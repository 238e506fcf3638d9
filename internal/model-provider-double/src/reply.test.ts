import { describe, expect, it } from "vitest";
import {
  contextOverflow,
  delayed,
  dropMidStream,
  endWithoutFinish,
  hang,
  httpError,
  invalidKey,
  overloaded,
  quotaExhausted,
  rateLimited,
  respondWith,
  serverError,
  text,
  toolCalls,
} from "./replies";
import { DataReplySchema, ReplySchema } from "./reply";

describe("reply helpers", () => {
  it("build plain data replies that the schema accepts unchanged", () => {
    const replies = [
      text("hi", { usage: { inputTokens: 1, outputTokens: 2 } }),
      toolCalls([{ name: "ls", arguments: { path: "." }, id: "c1" }], { text: "looking" }),
      rateLimited({ retryAfterSeconds: 1, retryAfterMs: 500 }),
      serverError({ status: 502 }),
      overloaded(),
      quotaExhausted({ anthropicShape: "billing_error" }),
      invalidKey(),
      contextOverflow({ limit: 8192, tokens: 9000 }),
      httpError({ status: 404, message: "no such model", code: "model_not_found", headers: { "x-a": "b" } }),
      dropMidStream({ afterEvents: 3, reply: text("cut") }),
      endWithoutFinish(),
      hang({ sendHeaders: true }),
    ];
    for (const reply of replies) expect(DataReplySchema.parse(reply)).toEqual(reply);
    expect(new Set(replies.map((reply) => reply.type)).size).toBe(DataReplySchema.options.length);
  });

  it("sends a Date as its HTTP-date", () => {
    const date = new Date(Date.UTC(2030, 0, 2, 3, 4, 5));
    expect(rateLimited({ retryAfterDate: date })).toEqual({
      type: "rate_limited",
      retryAfterDate: "Wed, 02 Jan 2030 03:04:05 GMT",
    });
  });

  it("composes a delay with any reply, function replies included", () => {
    expect(delayed(25, overloaded())).toEqual({ type: "overloaded", delayMs: 25 });
    const respond = () => text("x");
    const reply = ReplySchema.parse(delayed(5, respondWith(respond)));
    expect(reply).toMatchObject({ type: "function", delayMs: 5 });
    expect(reply.type === "function" && reply.respond).toBe(respond);
  });
});

describe("ReplySchema", () => {
  it.each([
    [{ type: "text" }, "text"],
    [{ type: "tool_calls", calls: [] }, "calls"],
    [{ type: "tool_calls", calls: [{ name: "x", arguments: "{}" }] }, "calls.0.arguments"],
    [{ type: "rate_limited", retryAfterDate: "soon" }, "retryAfterDate"],
    [{ type: "server_error", status: 404 }, "status"],
    [{ type: "context_overflow" }, "limit"],
    [{ type: "drop_mid_stream", afterEvents: -1 }, "afterEvents"],
    [{ type: "drop_mid_stream", afterEvents: 1, reply: { type: "hang" } }, "reply.type"],
    [{ type: "text", text: "x", delayMs: 1.5 }, "delayMs"],
    [{ type: "function", respond: "not a function" }, "respond"],
    [{ type: "smile" }, "type"],
  ])("rejects %j at %s", (reply, path) => {
    const parsed = ReplySchema.safeParse(reply);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toContain(path);
  });

  it("keeps function replies out of the data union a script file may hold", () => {
    expect(DataReplySchema.safeParse(respondWith(() => text("x"))).success).toBe(false);
  });
});
