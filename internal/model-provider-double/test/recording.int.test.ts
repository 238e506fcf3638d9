/*
 * What the double records and how it behaves as a server: request records, counts, concurrency, scripts,
 * the double's own answers, the wire-level headers, control routes and close().
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  hang,
  isProviderDoubleError,
  type ProviderDouble,
  ProviderDoubleStatsSchema,
  RecordedRequestSchema,
  rateLimited,
  startProviderDouble,
  text,
  toolCalls,
} from "../src/index";
import { ANTHROPIC_KEY, apiCallError, call, caught, modelFor, OPENAI_KEY } from "./sdk";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());
beforeEach(() => provider.reset());

function post(path: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${provider.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
}

describe("request records", () => {
  it("keeps method, path, lower-case headers, the parsed body, times, reply and outcome", async () => {
    provider.script("gpt-x", [text("one")]).script("claude-x", [text("two")]);
    const before = Date.now();
    await call(modelFor(provider, "openai", "gpt-x"), "generate", { prompt: "first" });
    await call(modelFor(provider, "anthropic", "claude-x"), "stream", { prompt: "second" });
    const after = Date.now();

    const [openai, anthropic] = provider.requests;
    expect(provider.requests).toHaveLength(2);
    for (const record of provider.requests) {
      expect(RecordedRequestSchema.parse(record)).toEqual(record);
      expect(Object.keys(record.headers).every((name) => name === name.toLowerCase())).toBe(true);
      expect(record.arrivedAt).toBeGreaterThanOrEqual(before - 1);
      expect(record.finishedAt).toBeGreaterThanOrEqual(record.arrivedAt);
      expect(record.finishedAt).toBeLessThanOrEqual(after + 1);
    }
    expect(openai).toMatchObject({
      seq: 1,
      wire: "openai",
      method: "POST",
      path: "/v1/chat/completions",
      route: "gpt-x",
      stream: false,
      headers: { authorization: `Bearer ${OPENAI_KEY}`, "content-type": "application/json" },
      body: { model: "gpt-x", messages: [{ role: "user", content: "first" }] },
      source: "script",
      reply: { type: "text", text: "one" },
      outcome: "completed",
      completed: true,
    });
    expect(anthropic).toMatchObject({
      seq: 2,
      wire: "anthropic",
      path: "/v1/messages",
      route: "claude-x",
      stream: true,
      headers: { "x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01" },
      body: { model: "claude-x", stream: true, messages: [{ role: "user" }] },
      outcome: "completed",
    });
  });

  it("counts requests per route and serves parallel agents each from its own script", async () => {
    const routes = ["agent-a", "agent-b", "agent-c"];
    for (const route of routes) {
      provider.script(route, [
        toolCalls([{ name: "note", arguments: { who: route } }]),
        text(`${route} done`),
      ]);
    }
    const { tool } = await import("ai");
    const { z } = await import("zod");
    const tools = {
      note: tool({ inputSchema: z.object({ who: z.string() }), execute: async ({ who }) => `noted ${who}` }),
    };
    const results = await Promise.all(
      routes.map((route, i) =>
        call(modelFor(provider, i % 2 === 0 ? "openai" : "anthropic", route), "stream", { tools }),
      ),
    );
    expect(results.map((r) => r.text)).toEqual(["agent-a done", "agent-b done", "agent-c done"]);
    expect(results.map((r) => r.toolCalls)).toEqual(
      routes.map((who) => [{ toolName: "note", input: { who } }]),
    );
    expect(provider.counts).toEqual({ "agent-a": 2, "agent-b": 2, "agent-c": 2 });
    expect(provider.requestsFor("agent-b").map((r) => r.reply?.type)).toEqual(["tool_calls", "text"]);
    expect(provider.requests.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("tracks requests in flight and the most seen at once", async () => {
    provider.script("wait", [hang(), hang({ sendHeaders: true }), hang()]);
    const controllers = [0, 1, 2].map(() => new AbortController());
    const pending = controllers.map((controller) =>
      caught(call(modelFor(provider, "openai", "wait"), "generate", { abortSignal: controller.signal })),
    );
    await provider.received(3);
    expect(provider.inFlight).toBe(3);
    expect(provider.maxInFlight).toBe(3);
    expect(provider.stats()).toEqual({ requests: 3, counts: { wait: 3 }, inFlight: 3, maxInFlight: 3 });
    for (const controller of controllers) controller.abort();
    await Promise.all(pending);
    await provider.idle();
    expect(provider.inFlight).toBe(0);
    expect(provider.maxInFlight).toBe(3);
    expect(provider.requests.map((r) => r.outcome)).toEqual([
      "client_closed",
      "client_closed",
      "client_closed",
    ]);
  });

  it("reset() forgets requests and scripts and restarts seq and maxInFlight", async () => {
    provider.script("r", [text("a"), text("b")]).setDefaultReply(text("changed default"));
    await call(modelFor(provider, "openai", "r"), "generate");
    expect(provider.remaining("r")).toBe(1);
    provider.reset();
    expect(provider.requests).toEqual([]);
    expect(provider.counts).toEqual({});
    expect(provider.remaining("r")).toBe(0);
    expect(provider.maxInFlight).toBe(0);
    const result = await call(modelFor(provider, "openai", "r"), "generate");
    expect(result.text).toBe("Hello from the provider double.");
    expect(provider.requests[0]).toMatchObject({ seq: 1, source: "default" });
  });
});

describe("scripts and defaults", () => {
  it("rejects a malformed reply when it is scripted, naming the route and index", () => {
    let thrown: unknown;
    try {
      provider.script("bad", [text("fine"), { type: "text" } as never]);
    } catch (error) {
      thrown = error;
    }
    expect(isProviderDoubleError(thrown)).toBe(true);
    expect(thrown).toMatchObject({
      code: "invalid_reply",
      message: expect.stringContaining('script("bad") reply 1'),
    });
    expect(provider.remaining("bad")).toBe(0);
  });

  it("rejects invalid options at start", async () => {
    const error = await caught(startProviderDouble({ defaultReply: { type: "nope" } as never }));
    expect(error).toMatchObject({
      code: "invalid_options",
      message: expect.stringContaining("defaultReply"),
    });
  });

  it("takes a default reply and scripts at start", async () => {
    const other = await startProviderDouble({
      defaultReply: text("my default"),
      scripts: { first: [text("from the start script")] },
    });
    try {
      expect((await call(modelFor(other, "anthropic", "first"), "generate")).text).toBe(
        "from the start script",
      );
      expect((await call(modelFor(other, "anthropic", "first"), "generate")).text).toBe("my default");
    } finally {
      await other.close();
    }
  });

  it("shows a reply function's result as the reply, and an invalid one as the double's 500", async () => {
    const { respondWith } = await import("../src/index");
    provider.script("fn", [respondWith(() => ({ type: "text" }) as never)]);
    const error = apiCallError(await caught(call(modelFor(provider, "openai", "fn"), "generate")));
    expect(error.statusCode).toBe(500);
    expect(error.message).toMatch(/^The reply function for route "fn" returned an invalid reply: text: /);
    expect(provider.requests[0]).toMatchObject({
      source: "double",
      reply: { type: "http_error", status: 500 },
    });
  });
});

describe("the double's own answers", () => {
  it("answers an unknown path 404 and records it with no wire", async () => {
    const response = await post("/v1/completions", { model: "m", prompt: "x" });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string; type: string } };
    expect(body.error).toMatchObject({ type: "invalid_request_error" });
    expect(body.error.message).toMatch(
      /^No route for POST \/v1\/completions; the provider double serves POST /,
    );
    expect(provider.requests[0]).toMatchObject({
      wire: null,
      route: "m",
      source: "double",
      outcome: "completed",
    });
  });

  it("answers a body that is not a JSON object 400, in the path's error shape", async () => {
    const anthropic = await post("/v1/messages", "{not json");
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toMatchObject({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: expect.stringMatching(/^The request body must be a JSON object; /),
      },
    });
    const openai = await post("/chat/completions", "[1, 2]");
    expect(openai.status).toBe(400);
    expect(await openai.json()).toMatchObject({
      error: { message: "The request body must be a JSON object; found JSON that is not an object." },
    });
    expect(provider.requests.map((r) => [r.wire, r.body])).toEqual([
      ["anthropic", null],
      ["openai", [1, 2]],
    ]);
  });

  it("answers a GET on a served path 405", async () => {
    const response = await fetch(`${provider.url}/v1/chat/completions`);
    expect(response.status).toBe(405);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringContaining("send POST") } });
  });

  it("serves chat completions without the /v1 prefix too", async () => {
    provider.script("nov1", [text("no prefix")]);
    const response = await post("/chat/completions", { model: "nov1", messages: [] });
    expect(
      ((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message,
    ).toMatchObject({ role: "assistant", content: "no prefix" });
  });
});

describe("on the wire", () => {
  it("sends a whole reply with a Content-Length on a kept-alive connection", async () => {
    provider.script("w", [text("whole"), rateLimited({ retryAfterSeconds: 2, retryAfterMs: 1500 })]);
    for (const expected of [200, 429]) {
      const response = await post("/v1/chat/completions", { model: "w", messages: [] });
      const body = await response.text();
      expect(response.status).toBe(expected);
      expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
      expect(response.headers.get("transfer-encoding")).toBeNull();
      expect(response.headers.get("connection")).toBe("keep-alive");
      if (expected === 429) {
        expect(response.headers.get("retry-after")).toBe("2");
        expect(response.headers.get("retry-after-ms")).toBe("1500");
      }
    }
  });

  it("streams OpenAI chunks with usage only when include_usage is set, then [DONE]", async () => {
    provider.script("s", [text("a b", { usage: { inputTokens: 3, outputTokens: 2 } }), text("a b")]);
    const withUsage = await (
      await post("/v1/chat/completions", {
        model: "s",
        stream: true,
        stream_options: { include_usage: true },
      })
    ).text();
    const without = await (await post("/v1/chat/completions", { model: "s", stream: true })).text();
    const data = (sse: string) =>
      sse
        .split("\n\n")
        .filter(Boolean)
        .map((frame) => frame.replace(/^data: /, ""));
    expect(data(withUsage).at(-1)).toBe("[DONE]");
    expect(JSON.parse(data(withUsage).at(-2)!)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
    expect(data(without).filter((frame) => frame.includes('"usage"'))).toEqual([]);
  });
});

describe("the Responses wire", () => {
  type ResponseBody = { id: string; output: Array<{ type: string; id: string; call_id?: string }> };
  const user = { role: "user", content: [{ type: "input_text", text: "hi" }] };

  it("serves /v1/responses and /responses, recording the wire, the stream flag and the prompt", async () => {
    provider.script("r", [text("one"), text("two")]);
    const plain = await post("/v1/responses", {
      model: "r",
      instructions: "Be brief.",
      input: [user],
      max_output_tokens: 50,
    });
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as ResponseBody).output[0]).toMatchObject({ type: "message" });
    const streamed = await post("/responses", { model: "r", input: "again", stream: true });
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await streamed.text()).toMatch(/^event: response\.created\n/);
    expect(provider.requests.map((r) => [r.wire, r.path, r.stream, r.reply?.type])).toEqual([
      ["responses", "/v1/responses", false, "text"],
      ["responses", "/responses", true, "text"],
    ]);
    expect(provider.requests[0]!.prompt).toEqual({
      instructions: ["Be brief."],
      items: [{ type: "message", role: "user", text: "hi" }],
      tools: [],
      maxOutputTokens: 50,
    });
    for (const record of provider.requests) expect(RecordedRequestSchema.parse(record)).toEqual(record);
  });

  it("resolves an item_reference to an item it sent, unless that response was not stored", async () => {
    provider.script("ref", [
      toolCalls([{ name: "ls", arguments: {} }], { text: "Looking." }),
      text("stored: referenced"),
      toolCalls([{ name: "ls", arguments: {} }], { text: "Not kept." }),
      text("never sent"),
    ]);
    const first = (await (
      await post("/v1/responses", { model: "ref", input: [user] })
    ).json()) as ResponseBody;
    const [message, call] = first.output;
    const followUp = (refs: string, callId: string) => ({
      model: "ref",
      input: [
        user,
        { type: "item_reference", id: refs },
        { type: "function_call", call_id: callId, name: "ls", arguments: "{}" },
        { type: "function_call_output", call_id: callId, output: "a.ts" },
      ],
    });
    const second = await post("/v1/responses", followUp(message!.id, call!.call_id!));
    expect(second.status).toBe(200);
    expect(provider.requests[1]!.prompt.items.slice(0, 2)).toEqual([
      { type: "message", role: "user", text: "hi" },
      { type: "message", role: "assistant", text: "Looking." },
    ]);

    const unstored = (await (
      await post("/v1/responses", { model: "ref", input: [user], store: false })
    ).json()) as ResponseBody;
    const refused = await post(
      "/v1/responses",
      followUp(unstored.output[0]!.id, unstored.output[1]!.call_id!),
    );
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({
      error: {
        message: expect.stringMatching(
          new RegExp(
            `^Item with id '${unstored.output[0]!.id}' not found\\. Items are not persisted when \`store\` is set to false\\.`,
          ),
        ),
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
    expect(provider.requests[3]).toMatchObject({
      source: "double",
      reply: { type: "http_error", status: 404 },
    });
    expect(provider.remaining("ref")).toBe(1);

    provider.reset();
    const forgotten = await post("/v1/responses", followUp(message!.id, call!.call_id!));
    expect(forgotten.status).toBe(404);
  });

  it("refuses a tool output whose call is not in the input, without using the script", async () => {
    provider.script("pairs", [text("unused")]);
    const response = await post("/v1/responses", {
      model: "pairs",
      input: [user, { type: "function_call_output", call_id: "call_gone", output: "x" }],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      "No tool call found for function call output with call_id call_gone.",
    );
    expect(provider.remaining("pairs")).toBe(1);
  });
});

describe("control routes and close()", () => {
  it("reports stats and resets over HTTP, without recording those requests", async () => {
    await post("/v1/messages", { model: "c", messages: [] });
    const stats = ProviderDoubleStatsSchema.parse(
      await (await fetch(`${provider.url}/_double/stats`)).json(),
    );
    expect(stats).toEqual({ requests: 1, counts: { c: 1 }, inFlight: 0, maxInFlight: 1 });
    const reset = await post("/_double/reset", {});
    expect(await reset.json()).toEqual({ requests: 0, counts: {}, inFlight: 0, maxInFlight: 0 });
    expect(provider.requests).toEqual([]);
    expect((await fetch(`${provider.url}/_double/nothing`)).status).toBe(404);
  });

  it("ends a hanging request when it closes, as server_closed", async () => {
    const other = await startProviderDouble({ defaultReply: hang() });
    const pending = caught(call(modelFor(other, "openai", "h"), "generate"));
    await other.received(1);
    await other.close();
    const error = apiCallError(await pending);
    expect(error.name).toBe("AI_APICallError");
    expect(error.message).toMatch(/^Cannot connect to API/);
    expect(other.requests[0]).toMatchObject({ outcome: "server_closed", completed: false });
    expect(other.inFlight).toBe(0);
    await expect(other.close()).resolves.toBeUndefined();
  });

  it("reports a port in use as listen_failed", async () => {
    const error = await caught(startProviderDouble({ port: provider.port }));
    expect(isProviderDoubleError(error)).toBe(true);
    expect(error).toMatchObject({
      code: "listen_failed",
      message: expect.stringContaining(`${provider.port}`),
    });
  });
});
