/*
 * `api_style: responses`: the native loop on OpenAI's Responses API through `@ai-sdk/openai`, plain and
 * streaming, against the provider double's Responses wire (`<base_url>/responses`): replies, the tool round
 * trip (results go back as `function_call_output` items), usage, the retry table's Responses rows, the
 * finish of a stream, compaction on the Responses API's overflow error, and the profile's chat_options.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  contextOverflow,
  dropMidStream,
  endWithoutFinish,
  invalidKey,
  type ProviderDouble,
  quotaExhausted,
  type RecordedRequest,
  rateLimited,
  serverError,
  startProviderDouble,
  text,
  toolCalls,
  toolResults,
} from "@icode/model-provider-double";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NOTE_HEADER } from "../src/native/compaction";
import { createNativeRunner } from "../src/native/runner";
import type { AgentTool } from "../src/tool";
import {
  attempt,
  MODES,
  modelYaml,
  noteTool,
  noWait,
  profileYaml,
  type Setup,
  setup,
  toolsetOf,
} from "./native-harness";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());
beforeEach(() => provider.reset());

/** The `input` items of a request's body, as `@ai-sdk/openai` sent them. */
function inputOf(request: RecordedRequest): Array<Record<string, unknown>> {
  return (request.body as { input: Array<Record<string, unknown>> }).input;
}

describe.each(MODES)("responses, $name", ({ stream }) => {
  let counter = 0;
  /** A fresh route with an `openai` model profile in `api_style: responses`. */
  async function env(
    options: { model?: Record<string, unknown>; tools?: AgentTool[]; provider?: string } = {},
  ) {
    counter += 1;
    const route = `responses-${stream ? "s" : "p"}-${counter}`;
    const s: Setup = await setup({
      models: {
        m: modelYaml(provider, "openai", route, {
          api_style: "responses",
          stream,
          ...(options.provider === undefined ? {} : { provider: options.provider }),
          ...options.model,
        }),
      },
      agents: { Tester: profileYaml("Tester", ["instructions: You review code."]) },
    });
    const toolset = toolsetOf(options.tools ?? []);
    const runner = createNativeRunner({ buildToolset: toolset.build, sleep: noWait });
    return { s, route, runner, toolset, requests: () => provider.requestsFor(route) };
  }

  it("answers with the reply's text, reports usage, and sends the prompt the Responses way", async () => {
    const e = await env();
    provider.script(e.route, [text("Looks good to me.", { usage: { inputTokens: 30, outputTokens: 5 } })]);
    const { result, io, transcripts } = await attempt(e.runner, e.s, { model: "m" });
    expect(result).toEqual({ status: "completed", value: { text: "Looks good to me.", data: null } });
    expect(io.text).toBe("Looks good to me.");
    expect(io.of("usage").at(-1)?.usage).toEqual({
      input_tokens: 30,
      output_tokens: 5,
      total_tokens: 35,
      cached_input_tokens: 0,
      reasoning_tokens: 0,
      cost: null,
    });
    const [request] = e.requests();
    expect(e.requests()).toHaveLength(1);
    expect(request).toMatchObject({
      wire: "responses",
      path: "/v1/responses",
      stream,
      headers: { authorization: "Bearer sk-test-key" },
      body: { model: e.route, max_output_tokens: 1000 },
    });
    expect(request!.prompt).toEqual({
      instructions: ["You review code."],
      items: [{ type: "message", role: "user", text: "Review the change." }],
      tools: [],
      maxOutputTokens: 1000,
    });
    expect(transcripts[0]).toMatchObject({
      runtime: "native",
      outcome: "completed",
      usage: { input_tokens: 30, output_tokens: 5 },
    });
    expect(transcripts[0]!.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "Looks good to me.",
    });
  });

  it("serves deepseek-openai's Responses API the same way", async () => {
    const e = await env({ provider: "deepseek-openai" });
    provider.script(e.route, [text("Hello from DeepSeek.")]);
    const { result } = await attempt(e.runner, e.s, { model: "m" });
    expect(result).toMatchObject({ status: "completed", value: { text: "Hello from DeepSeek." } });
    expect(e.requests()[0]).toMatchObject({ wire: "responses", path: "/v1/responses" });
  });

  it("runs a tool round trip: the call runs once and its result goes back as function_call_output", async () => {
    const note = noteTool();
    const e = await env({ tools: [note.tool] });
    provider.script(e.route, [
      toolCalls([{ name: "write_note", arguments: { note: "r1" } }], {
        text: "Let me write it down.",
        usage: { inputTokens: 20, outputTokens: 4 },
      }),
      text("Noted.", { usage: { inputTokens: 40, outputTokens: 9 } }),
    ]);
    const { result, io, transcripts } = await attempt(e.runner, e.s, { model: "m" });
    expect(result).toMatchObject({ status: "completed", value: { text: "Noted." } });
    expect(note.runs).toEqual([{ note: "r1" }]);
    expect(readFileSync(join(e.s.workspace, "notes.txt"), "utf8")).toBe("r1\n");

    const [first, second] = e.requests();
    expect(e.requests()).toHaveLength(2);
    expect(first!.prompt.tools).toEqual(["write_note"]);
    expect((first!.body as { tools: unknown[] }).tools).toEqual([
      expect.objectContaining({ type: "function", name: "write_note" }),
    ]);
    const callId = `call_${first!.seq}_0`;
    expect(second!.prompt.items).toEqual([
      { type: "message", role: "user", text: "Review the change." },
      { type: "message", role: "assistant", text: "Let me write it down." },
      { type: "tool_call", id: callId, name: "write_note", arguments: { note: "r1" } },
      { type: "tool_result", toolCallId: callId, content: 'wrote "r1"', isError: false },
    ]);
    expect(toolResults(second!)).toEqual([{ toolCallId: callId, content: 'wrote "r1"', isError: false }]);
    // every item in full: the requests do not lean on what the provider stored
    expect(inputOf(second!).map((item) => item["type"] ?? item["role"])).toEqual([
      "system",
      "user",
      "assistant",
      "function_call",
      "function_call_output",
    ]);
    expect(inputOf(second!).at(-1)).toEqual({
      type: "function_call_output",
      call_id: callId,
      output: 'wrote "r1"',
    });
    expect((second!.body as { store?: unknown }).store).toBe(false);

    expect(io.of("tool_call").map((c) => [c.status, c.result])).toEqual([
      ["pending", null],
      ["completed", 'wrote "r1"'],
    ]);
    expect(io.of("usage").at(-1)?.usage).toMatchObject({
      input_tokens: 60,
      output_tokens: 13,
      total_tokens: 73,
    });
    expect(transcripts[0]!.usage).toMatchObject({ input_tokens: 60, output_tokens: 13, total_tokens: 73 });
    expect(transcripts[0]!.tool_calls).toEqual([
      expect.objectContaining({ id: callId, name: "write_note", input: { note: "r1" } }),
    ]);
  });

  it("sends chat_options as written, without letting them replace the conversation", async () => {
    const note = noteTool();
    const e = await env({
      tools: [note.tool],
      model: {
        chat_options: { temperature: 0.2, input: "not the conversation", extra_body: { top_logprobs: 2 } },
      },
    });
    provider.script(e.route, [toolCalls([{ name: "write_note", arguments: { note: "x" } }]), text("ok")]);
    const { result } = await attempt(e.runner, e.s, { model: "m" });
    expect(result).toMatchObject({ status: "completed", value: { text: "ok" } });
    for (const request of e.requests()) {
      expect(request.body).toMatchObject({ temperature: 0.2, top_logprobs: 2 });
      expect(request.prompt.items[0]).toEqual({ type: "message", role: "user", text: "Review the change." });
    }
  });

  it("lets a profile ask the provider to store its responses (chat_options store: true)", async () => {
    const note = noteTool();
    const e = await env({ tools: [note.tool], model: { chat_options: { store: true } } });
    provider.script(e.route, [
      toolCalls([{ name: "write_note", arguments: { note: "kept" } }], { text: "Writing." }),
      text("Done."),
    ]);
    const { result } = await attempt(e.runner, e.s, { model: "m" });
    expect(result).toMatchObject({ status: "completed", value: { text: "Done." } });
    const second = e.requests()[1]!;
    expect((second.body as { store?: unknown }).store).toBe(true);
    // with the response stored, the SDK refers to the earlier text by id, and the double resolves it
    expect(inputOf(second)).toContainEqual({
      type: "item_reference",
      id: `msg_double_${e.requests()[0]!.seq}`,
    });
    expect(second.prompt.items[1]).toEqual({ type: "message", role: "assistant", text: "Writing." });
  });

  describe("retries within the attempt", () => {
    it("retries a 429 within the attempt, honouring retry-after-ms", async () => {
      const e = await env();
      provider.script(e.route, [rateLimited({ retryAfterMs: 250 }), text("ok")]);
      const { result, io } = await attempt(e.runner, e.s, { model: "m" });
      expect(result).toMatchObject({ status: "completed", value: { text: "ok" } });
      expect(e.requests().map((r) => r.reply?.type)).toEqual(["rate_limited", "text"]);
      expect(io.of("request_retry")).toEqual([
        expect.objectContaining({ retry: 1, delay_ms: 250, error_class: "model_rate_limited" }),
      ]);
    });

    it("retries a 500", async () => {
      const e = await env();
      provider.script(e.route, [serverError(), text("ok")]);
      const { result, io } = await attempt(e.runner, e.s, { model: "m" });
      expect(result.status).toBe("completed");
      expect(io.of("request_retry").map((r) => [r.retry, r.error_class])).toEqual([
        [1, "model_server_error"],
      ]);
    });

    it("never retries insufficient_quota: model_quota_exhausted", async () => {
      const e = await env();
      provider.script(e.route, [quotaExhausted(), text("never")]);
      const { result, io, transcripts } = await attempt(e.runner, e.s, { model: "m" });
      expect(e.requests()).toHaveLength(1);
      expect(io.of("request_retry")).toEqual([]);
      expect(result).toMatchObject({
        status: "failed",
        error: { class: "model_quota_exhausted", retryable: false },
      });
      expect((result as { error: { message: string } }).error.message).toMatch(/exceeded your current quota/);
      expect(transcripts[0]!.outcome).toBe("model_quota_exhausted");
    });

    it("never retries an invalid key", async () => {
      const e = await env();
      provider.script(e.route, [invalidKey(), text("never")]);
      const { result } = await attempt(e.runner, e.s, { model: "m" });
      expect(e.requests()).toHaveLength(1);
      expect(result).toMatchObject({
        status: "failed",
        error: { class: "model_auth_failed", retryable: false },
      });
    });

    it("retries a reply cut mid-way", async () => {
      const e = await env();
      provider.script(e.route, [dropMidStream({ afterEvents: 4 }), text("whole answer")]);
      const { result, io } = await attempt(e.runner, e.s, { model: "m" });
      expect(result).toMatchObject({ status: "completed", value: { text: "whole answer" } });
      expect(e.requests().map((r) => r.outcome)).toEqual(["dropped", "completed"]);
      expect(io.of("request_retry").map((r) => r.error_class)).toEqual(["model_connection_failed"]);
    });

    if (stream) {
      it("takes a completed stream as finished when stream_requires_finish_reason is set", async () => {
        const e = await env({ model: { stream_requires_finish_reason: true } });
        provider.script(e.route, [text("whole")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "whole" } });
        expect(io.of("request_retry")).toEqual([]);
        expect(e.requests()).toHaveLength(1);
      });

      it("retries a stream without response.completed when stream_requires_finish_reason is set", async () => {
        const e = await env({ model: { stream_requires_finish_reason: true } });
        provider.script(e.route, [endWithoutFinish({ reply: text("half") }), text("whole")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "whole" } });
        expect(io.of("request_retry").map((r) => r.error_class)).toEqual(["model_stream_interrupted"]);
      });

      it("accepts a stream without response.completed when stream_requires_finish_reason is off", async () => {
        const e = await env();
        provider.script(e.route, [endWithoutFinish({ reply: text("half an answer") })]);
        const { result } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "half an answer" } });
        expect(e.requests()).toHaveLength(1);
      });
    }
  });

  it("compacts on the Responses API's overflow error (it names no window) and sends once more", async () => {
    const note = noteTool();
    const e = await env({ tools: [note.tool] });
    provider.script(e.route, [
      toolCalls([{ name: "write_note", arguments: { note: "n1" } }]),
      contextOverflow({ limit: 8192 }),
      text("## Goal\nReview.\n## Done so far\nWrote n1."),
      text("Reviewed."),
    ]);
    const { result, io } = await attempt(e.runner, e.s, { model: "m" });
    expect(result).toMatchObject({ status: "completed", value: { text: "Reviewed." } });
    expect(e.requests().map((r) => r.reply?.type)).toEqual([
      "tool_calls",
      "context_overflow",
      "text",
      "text",
    ]);
    const resent = e.requests()[3]!;
    expect(resent.prompt.items).toEqual([
      {
        type: "message",
        role: "user",
        text: `Review the change.\n\n${NOTE_HEADER}\n\n## Goal\nReview.\n## Done so far\nWrote n1.`,
      },
    ]);
    expect(io.of("compaction")).toHaveLength(1);
  });
});
