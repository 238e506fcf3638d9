/*
 * Every reply, through the real AI SDK clients of both providers, in both modes (`generateText` and
 * `streamText`), with the SDK's retries off: what the SDK reports is what an agent loop will see.
 */
import { tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  contextOverflow,
  type DataReply,
  DEFAULT_REPLY,
  delayed,
  dropMidStream,
  endWithoutFinish,
  hang,
  httpError,
  invalidKey,
  lastUserText,
  overloaded,
  type ProviderDouble,
  quotaExhausted,
  rateLimited,
  respondWith,
  serverError,
  startProviderDouble,
  text,
  toolCalls,
  toolResults,
} from "../src/index";
import { apiCallError, call, caught, MODES, modelFor, WIRES_UNDER_TEST } from "./sdk";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());
beforeEach(() => provider.reset());

const weatherTools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  }),
  clock: tool({
    description: "The time in a zone",
    inputSchema: z.object({ zone: z.string() }),
    execute: async ({ zone }) => `noon ${zone}`,
  }),
};

describe.each(WIRES_UNDER_TEST)("%s wire", (wire) => {
  describe.each(MODES)("%s", (mode) => {
    const stream = mode === "stream";

    it("answers with the scripted text and reports its usage", async () => {
      provider.script("m-text", [
        text("Hello there, world.", { usage: { inputTokens: 11, outputTokens: 7 } }),
      ]);
      const result = await call(modelFor(provider, wire, "m-text"), mode);
      expect(result).toMatchObject({
        text: "Hello there, world.",
        finishReason: "stop",
        usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
        steps: 1,
      });
      expect(provider.requests).toHaveLength(1);
      expect(provider.requests[0]).toMatchObject({
        wire,
        route: "m-text",
        stream,
        source: "script",
        reply: { type: "text", text: "Hello there, world." },
        outcome: "completed",
        completed: true,
      });
    });

    it("gives an unscripted request the default reply, with estimated usage", async () => {
      const result = await call(modelFor(provider, wire, "m-unscripted"), mode);
      expect(result.text).toBe(DEFAULT_REPLY.text);
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      expect(result.usage.outputTokens).toBe(Math.ceil(DEFAULT_REPLY.text.length / 4));
      expect(provider.requests[0]).toMatchObject({ source: "default", reply: DEFAULT_REPLY });
    });

    it("runs a multi-step tool loop: two calls, then the tool results come back in the second request", async () => {
      provider.script("m-tools", [
        toolCalls(
          [
            { name: "weather", arguments: { city: "Paris" } },
            { name: "clock", arguments: { zone: "UTC" }, id: "call-fixed" },
          ],
          { text: "Let me check.", usage: { inputTokens: 20, outputTokens: 5 } },
        ),
        text("It is sunny in Paris at noon.", { usage: { inputTokens: 40, outputTokens: 8 } }),
      ]);
      const result = await call(modelFor(provider, wire, "m-tools"), mode, {
        tools: weatherTools,
        maxSteps: 3,
      });

      expect(result.steps).toBe(2);
      expect(result.text).toBe("It is sunny in Paris at noon.");
      expect(result.finishReason).toBe("stop");
      expect(result.toolCalls).toEqual([
        { toolName: "weather", input: { city: "Paris" } },
        { toolName: "clock", input: { zone: "UTC" } },
      ]);
      expect(result.usage).toEqual({ inputTokens: 60, outputTokens: 13, totalTokens: 73 });

      const [first, second] = provider.requestsFor("m-tools");
      expect(provider.requestsFor("m-tools")).toHaveLength(2);
      expect(toolResults(first!)).toEqual([]);
      const defaultId = wire === "anthropic" ? `toolu_${first!.seq}_0` : `call_${first!.seq}_0`;
      expect(toolResults(second!)).toEqual([
        { toolCallId: defaultId, content: expect.stringContaining("sunny in Paris"), isError: false },
        { toolCallId: "call-fixed", content: expect.stringContaining("noon UTC"), isError: false },
      ]);
      // The same conversation whatever the wire (Responses: the text comes back as an item_reference).
      expect(
        second!.prompt.items.map((item) => (item.type === "message" ? [item.role, item.text] : item.type)),
      ).toEqual([
        ["user", "Say hello."],
        ["assistant", "Let me check."],
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
      ]);
      expect(second!.prompt.items.filter((item) => item.type === "tool_call")).toEqual([
        { type: "tool_call", id: defaultId, name: "weather", arguments: { city: "Paris" } },
        { type: "tool_call", id: "call-fixed", name: "clock", arguments: { zone: "UTC" } },
      ]);
      expect(first!.prompt).toMatchObject({ tools: ["weather", "clock"], maxOutputTokens: 256 });
      expect(provider.remaining("m-tools")).toBe(0);
    });

    it("answers from a function of the request (echo)", async () => {
      const seen: Array<{ wire: string; stream: boolean }> = [];
      provider.script("m-echo", [
        respondWith(async (request) => {
          seen.push({ wire: request.wire, stream: request.stream });
          return text(`echo: ${lastUserText(request)}`);
        }),
      ]);
      const result = await call(modelFor(provider, wire, "m-echo"), mode, { prompt: "ping 42" });
      expect(result.text).toBe("echo: ping 42");
      expect(seen).toEqual([{ wire, stream }]);
      expect(provider.requests[0]).toMatchObject({
        source: "script",
        reply: { type: "text", text: "echo: ping 42" },
      });
    });

    it("turns a throwing reply function into a 500 that names the route", async () => {
      provider.script("m-throws", [
        respondWith(() => {
          throw new Error("boom");
        }),
      ]);
      const error = apiCallError(await caught(call(modelFor(provider, wire, "m-throws"), mode)));
      expect(error).toMatchObject({
        statusCode: 500,
        message: 'The reply function for route "m-throws" threw: boom',
      });
      expect(provider.requests[0]).toMatchObject({
        source: "double",
        reply: { type: "http_error", status: 500 },
      });
    });

    it("waits for a delayed reply, whatever it is", async () => {
      provider.script("m-delay", [delayed(30, text("late")), delayed(10, rateLimited())]);
      expect((await call(modelFor(provider, wire, "m-delay"), mode)).text).toBe("late");
      const error = apiCallError(await caught(call(modelFor(provider, wire, "m-delay"), mode)));
      expect(error.statusCode).toBe(429);
      expect(provider.requests.map((r) => r.reply?.delayMs)).toEqual([30, 10]);
    });

    type ErrorCase = {
      name: string;
      reply: DataReply;
      status: number;
      message: string | RegExp;
      /** `APICallError.data`, the error body as the provider's error schema parsed it. */
      data: Record<string, unknown>;
      headers?: Record<string, string>;
    };
    const date = new Date(Date.UTC(2030, 0, 2, 3, 4, 5)).toUTCString();
    const openaiCases: ErrorCase[] = [
      {
        name: "rate limit with retry-after seconds",
        reply: rateLimited({ retryAfterSeconds: 1 }),
        status: 429,
        message: "Rate limit reached for requests. Please try again in 1s.",
        data: { error: { type: "requests", code: "rate_limit_exceeded" } },
        headers: { "retry-after": "1" },
      },
      {
        name: "rate limit with retry-after-ms",
        reply: rateLimited({ retryAfterMs: 250 }),
        status: 429,
        message: /try again in 250ms/,
        data: { error: { code: "rate_limit_exceeded" } },
        headers: { "retry-after-ms": "250" },
      },
      {
        name: "rate limit with an HTTP-date",
        reply: rateLimited({ retryAfterDate: new Date(Date.parse(date)) }),
        status: 429,
        message: /Rate limit reached/,
        data: { error: { code: "rate_limit_exceeded" } },
        headers: { "retry-after": date },
      },
      {
        name: "server error",
        reply: serverError(),
        status: 500,
        message: "The server had an error while processing your request.",
        data: { error: { type: "server_error" } },
      },
      {
        name: "overloaded",
        reply: overloaded(),
        status: 503,
        message: /overloaded/,
        data: { error: { type: "server_error" } },
      },
      {
        name: "quota exhausted",
        reply: quotaExhausted(),
        status: 429,
        message: /You exceeded your current quota/,
        data: { error: { type: "insufficient_quota", code: "insufficient_quota" } },
      },
      {
        name: "invalid key",
        reply: invalidKey(),
        status: 401,
        message: "Incorrect API key provided: sk-***abcd.",
        data: { error: { code: "invalid_api_key" } },
      },
      {
        name: "context overflow",
        reply: contextOverflow({ limit: 8192 }),
        status: 400,
        message:
          /^This model's maximum context length is 8192 tokens\. However, your messages resulted in 8193 tokens\./,
        data: {
          error: { type: "invalid_request_error", code: "context_length_exceeded", param: "messages" },
        },
      },
      {
        name: "context overflow with the prompt size given",
        reply: contextOverflow({ limit: 100, tokens: 150 }),
        status: 400,
        message: /maximum context length is 100 tokens\. However, your messages resulted in 150 tokens/,
        data: { error: { code: "context_length_exceeded" } },
      },
      {
        name: "any other status",
        reply: httpError({ status: 404, message: "The model `m` does not exist.", code: "model_not_found" }),
        status: 404,
        message: "The model `m` does not exist.",
        data: { error: { type: "invalid_request_error", code: "model_not_found" } },
      },
    ];
    const anthropicCases: ErrorCase[] = [
      {
        name: "rate limit with retry-after seconds",
        reply: rateLimited({ retryAfterSeconds: 1 }),
        status: 429,
        message: "This request would exceed your rate limit. Please try again in 1s.",
        data: { type: "error", error: { type: "rate_limit_error" } },
        headers: { "retry-after": "1" },
      },
      {
        name: "rate limit with retry-after-ms",
        reply: rateLimited({ retryAfterMs: 250 }),
        status: 429,
        message: /try again in 250ms/,
        data: { error: { type: "rate_limit_error" } },
        headers: { "retry-after-ms": "250" },
      },
      {
        name: "rate limit with an HTTP-date",
        reply: rateLimited({ retryAfterDate: date }),
        status: 429,
        message: /rate limit/,
        data: { error: { type: "rate_limit_error" } },
        headers: { "retry-after": date },
      },
      {
        name: "server error",
        reply: serverError(),
        status: 500,
        message: "Internal server error",
        data: { error: { type: "api_error" } },
      },
      {
        name: "overloaded",
        reply: overloaded(),
        status: 529,
        message: "Overloaded",
        data: { error: { type: "overloaded_error" } },
      },
      {
        name: "quota exhausted (credit balance)",
        reply: quotaExhausted(),
        status: 400,
        message: /^Your credit balance is too low to access the Anthropic API/,
        data: { error: { type: "invalid_request_error" } },
      },
      {
        name: "quota exhausted (billing_error)",
        reply: quotaExhausted({ anthropicShape: "billing_error" }),
        status: 402,
        message: /billing/,
        data: { error: { type: "billing_error" } },
      },
      {
        name: "quota exhausted (permission_error)",
        reply: quotaExhausted({ anthropicShape: "permission_error" }),
        status: 403,
        message: /permission/,
        data: { error: { type: "permission_error" } },
      },
      {
        name: "invalid key",
        reply: invalidKey(),
        status: 401,
        message: "invalid x-api-key",
        data: { error: { type: "authentication_error" } },
      },
      {
        name: "context overflow",
        reply: contextOverflow({ limit: 8192 }),
        status: 400,
        message: "prompt is too long: 8193 tokens > 8192 maximum",
        data: { error: { type: "invalid_request_error" } },
      },
      {
        name: "context overflow with the prompt size given",
        reply: contextOverflow({ limit: 100, tokens: 150 }),
        status: 400,
        message: "prompt is too long: 150 tokens > 100 maximum",
        data: { error: { type: "invalid_request_error" } },
      },
      {
        name: "any other status",
        reply: httpError({ status: 404, message: "model: m" }),
        status: 404,
        message: "model: m",
        data: { error: { type: "not_found_error" } },
      },
    ];

    // The Responses API answers as Chat Completions does, but for a context overflow, in words naming no limit.
    const responsesCases: ErrorCase[] = [
      ...openaiCases.filter((c) => c.reply.type !== "context_overflow"),
      {
        name: "context overflow",
        reply: contextOverflow({ limit: 8192 }),
        status: 400,
        message:
          "Your input exceeds the context window of this model. Please adjust your input and try again.",
        data: {
          error: { type: "invalid_request_error", code: "context_length_exceeded", param: "input" },
        },
      },
    ];
    const cases = { openai: openaiCases, anthropic: anthropicCases, responses: responsesCases };

    it.each(cases[wire])(
      "surfaces $name as the SDK's APICallError",
      async ({ reply, status, message, data, headers }) => {
        provider.script("m-error", [reply]);
        const error = await caught(call(modelFor(provider, wire, "m-error"), mode));
        const fields = apiCallError(error);
        expect(fields.name).toBe("AI_APICallError");
        expect(fields.statusCode).toBe(status);
        if (typeof message === "string") expect(fields.message).toBe(message);
        else expect(fields.message).toMatch(message);
        expect((error as { data?: unknown }).data).toMatchObject(data);
        if (headers) expect(fields.responseHeaders).toMatchObject(headers);
        expect(provider.requests[0]).toMatchObject({ reply, outcome: "completed", stream });
      },
    );

    it("surfaces a connection dropped after K events as an error, and records the drop", async () => {
      provider.script("m-drop", [dropMidStream({ afterEvents: 3 }), dropMidStream({ afterEvents: 0 })]);
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = apiCallError(await caught(call(modelFor(provider, wire, "m-drop"), mode)));
        expect(error).toMatchObject({
          name: "AI_APICallError",
          message: "Failed to process successful response",
        });
        expect(String(error.cause)).toMatch(/terminated/);
      }
      await provider.idle();
      expect(provider.requests.map((r) => [r.outcome, r.completed])).toEqual([
        ["dropped", false],
        ["dropped", false],
      ]);
    });

    it("reports a reply without a finish reason the way the SDK does", async () => {
      provider.script("m-finishless", [endWithoutFinish({ reply: text("half an answer") })]);
      const result = await call(modelFor(provider, wire, "m-finishless"), mode);
      expect(result.text).toBe("half an answer");
      if (stream && wire === "openai") {
        // openai-compatible flags the stream itself and finishes the step as an error
        expect(result.finishReason).toBe("error");
        expect(result.streamErrors.map((e) => (e as Error).message)).toEqual([
          "Response stream ended without a finish reason.",
        ]);
      } else if (wire === "responses" && !stream) {
        // a Responses object has no finish reason: the SDK reads "stop" whatever its status ("in_progress")
        expect(result.finishReason).toBe("stop");
        expect(result.streamErrors).toEqual([]);
      } else {
        // a null finish_reason / stop_reason, or a stream with no message_delta / response.completed: "other"
        expect(result.finishReason).toBe("other");
        expect(result.streamErrors).toEqual([]);
      }
      expect(provider.requests[0]).toMatchObject({ outcome: "completed" });
    });

    it.each([false, true])("hangs (headers sent: %s) until the client aborts", async (sendHeaders) => {
      provider.script("m-hang", [hang({ sendHeaders })]);
      const controller = new AbortController();
      const pending = caught(
        call(modelFor(provider, wire, "m-hang"), mode, { abortSignal: controller.signal }),
      );
      await provider.received(1);
      expect(provider.inFlight).toBe(1);
      controller.abort();
      const error = (await pending) as Error;
      expect(error.name).toBe("AbortError");
      await provider.idle();
      expect(provider.requests[0]).toMatchObject({
        outcome: "client_closed",
        completed: false,
        reply: { type: "hang" },
      });
      expect(provider.inFlight).toBe(0);
    });

    it("writes nothing when the client gives up during a delay", async () => {
      provider.script("m-slow", [delayed(60_000, text("never sent"))]);
      const controller = new AbortController();
      const pending = caught(
        call(modelFor(provider, wire, "m-slow"), mode, { abortSignal: controller.signal }),
      );
      await provider.received(1);
      controller.abort();
      expect(((await pending) as Error).name).toBe("AbortError");
      await provider.idle();
      expect(provider.requests[0]).toMatchObject({ outcome: "client_closed", reply: { text: "never sent" } });
    });
  });

  it("lets the SDK's own retry honour retry-after-ms", async () => {
    provider.script("m-retry", [rateLimited({ retryAfterMs: 1 }), text("second time lucky")]);
    const result = await call(modelFor(provider, wire, "m-retry"), "generate", { maxRetries: 1 });
    expect(result.text).toBe("second time lucky");
    expect(provider.requestsFor("m-retry").map((r) => r.reply?.type)).toEqual(["rate_limited", "text"]);
  });
});
