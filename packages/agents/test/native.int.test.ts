/*
 * The native agent loop against the provider double, for both wire formats, plain and streaming: replies,
 * tool loops, approvals, every row of the retry table (counting the requests made), compaction, output
 * fallback, usage, continuation on a node retry, instructions, templates.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  contextOverflow,
  dropMidStream,
  endWithoutFinish,
  hang,
  invalidKey,
  lastUserText,
  overloaded,
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
import { NOTE_HEADER, NOTE_INSTRUCTIONS } from "../src/native/compaction";
import { createNativeRunner } from "../src/native/runner";
import type { AgentTool, ToolsetOptions } from "../src/tool";
import {
  attempt,
  MODES,
  modelYaml,
  noteTool,
  noWait,
  profileYaml,
  RecordingIO,
  type Setup,
  setup,
  type TestWire,
  toolsetOf,
  WIRES,
} from "./native-harness";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());
beforeEach(() => provider.reset());

/** The instructions a request carried (OpenAI: the system message; Anthropic: `system`). */
function systemOf(request: RecordedRequest): string {
  const body = request.body as { system?: unknown; messages?: { role: string; content: unknown }[] };
  if (request.wire === "anthropic") {
    const s = body.system;
    if (typeof s === "string") return s;
    return Array.isArray(s) ? s.map((p: { text?: string }) => p.text ?? "").join("") : "";
  }
  const m = body.messages?.find((x) => x.role === "system");
  return typeof m?.content === "string" ? m.content : "";
}

function userTexts(request: RecordedRequest): string[] {
  const body = request.body as { messages?: { role: string; content: unknown }[] };
  return (body.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : (m.content as { type: string; text?: string }[]).map((p) => p.text ?? "").join(""),
    );
}

function toolNames(request: RecordedRequest): string[] {
  const body = request.body as { tools?: { name?: string; function?: { name: string } }[] };
  return (body.tools ?? []).map((t) => t.function?.name ?? t.name ?? "?");
}

describe.each(WIRES)("%s wire", (wire: TestWire) => {
  describe.each(MODES)("$name", ({ stream }) => {
    let counter = 0;
    /** A fresh route (so scripts never mix) with its model profile. */
    async function env(
      options: {
        model?: Record<string, unknown>;
        agents?: Record<string, string>;
        workspace?: Record<string, string>;
        settings?: string;
        tools?: AgentTool[];
        runner?: Partial<Parameters<typeof createNativeRunner>[0]>;
      } = {},
    ) {
      counter += 1;
      const route = `${wire}-${stream ? "s" : "p"}-${counter}`;
      const s: Setup = await setup({
        models: { m: modelYaml(provider, wire, route, { stream, ...options.model }) },
        agents: options.agents ?? {
          Tester: profileYaml("Tester", ["instructions: You review code."]),
        },
        workspace: options.workspace ?? {},
        ...(options.settings === undefined ? {} : { settings: options.settings }),
      });
      const toolset = toolsetOf(options.tools ?? []);
      const runner = createNativeRunner({ buildToolset: toolset.build, sleep: noWait, ...options.runner });
      return { s, route, runner, toolset, requests: () => provider.requestsFor(route) };
    }

    it("answers with the reply's text, streams it as text activities, and reports usage", async () => {
      const e = await env();
      provider.script(e.route, [text("Looks good to me.", { usage: { inputTokens: 30, outputTokens: 5 } })]);
      const { result, io, transcripts } = await attempt(e.runner, e.s, { model: "m" });
      expect(result).toEqual({ status: "completed", value: { text: "Looks good to me.", data: null } });
      expect(io.text).toBe("Looks good to me.");
      expect(io.of("usage").at(-1)?.usage).toMatchObject({
        input_tokens: 30,
        output_tokens: 5,
        total_tokens: 35,
      });
      expect(e.requests()).toHaveLength(1);
      expect(e.requests()[0]).toMatchObject({ wire, stream });
      expect(userTexts(e.requests()[0]!)).toEqual(["Review the change."]);
      expect(transcripts).toHaveLength(1);
      expect(transcripts[0]).toMatchObject({
        runtime: "native",
        profile: "Tester",
        model: "m",
        attempt: 1,
        continued_from: null,
        outcome: "completed",
        usage: { input_tokens: 30, output_tokens: 5 },
        stderr: null,
      });
      expect(transcripts[0]!.messages.map((m) => [m.role, m.content])).toEqual([
        ["user", "Review the change."],
        ["system", "You review code."],
        ["assistant", "Looks good to me."],
      ]);
      expect(e.toolset.closed()).toBe(1);
    });

    it("sends the profile instructions, the memory files and the node's suffix, in that order", async () => {
      const e = await env({
        agents: {
          Tester: profileYaml("Tester", [
            "instructions: [Be terse., Cite file:line.]",
            "memory: {files: [AGENTS.md]}",
          ]),
        },
        workspace: { "AGENTS.md": "Run pnpm test before you answer.\n" },
      });
      provider.script(e.route, [text("ok")]);
      await attempt(e.runner, e.s, { model: "m", node: { instructions_suffix: "Answer in French." } });
      const system = systemOf(e.requests()[0]!);
      const at = (s: string) => system.indexOf(s);
      expect(at("Be terse.\nCite file:line.")).toBe(0);
      expect(at("Run pnpm test before you answer.")).toBeGreaterThan(at("Cite file:line."));
      expect(system).toContain(join(e.s.workspace, "AGENTS.md"));
      expect(at("Answer in French.")).toBeGreaterThan(at("Run pnpm test"));
      expect(system.endsWith("Answer in French.")).toBe(true);
    });

    it("runs a tool loop: the call runs once, its result goes back, activities go pending → completed", async () => {
      const note = noteTool();
      const e = await env({ tools: [note.tool] });
      provider.script(e.route, [
        toolCalls([{ name: "write_note", arguments: { note: "first" } }], {
          usage: { inputTokens: 20, outputTokens: 4 },
        }),
        text("Noted.", { usage: { inputTokens: 40, outputTokens: 9 } }),
      ]);
      const { result, io, transcripts } = await attempt(e.runner, e.s, { model: "m" });
      expect(result).toMatchObject({ status: "completed", value: { text: "Noted." } });
      expect(note.runs).toEqual([{ note: "first" }]);
      expect(readFileSync(join(e.s.workspace, "notes.txt"), "utf8")).toBe("first\n");
      expect(e.requests()).toHaveLength(2);
      expect(toolNames(e.requests()[0]!)).toEqual(["write_note"]);
      expect(toolResults(e.requests()[1]!)).toEqual([
        { toolCallId: expect.any(String), content: 'wrote "first"', isError: false },
      ]);
      const calls = io.of("tool_call");
      expect(calls.map((c) => [c.status, c.title, c.tool_kind, c.result])).toEqual([
        ["pending", "write_note first", "edit", null],
        ["completed", "write_note first", "edit", 'wrote "first"'],
      ]);
      // filesystem.write requires approval by default; the CLI's bypass mode runs it, and says so
      expect(io.of("permission")).toEqual([
        {
          kind: "permission",
          tool_call_id: calls[0]!.tool_call_id,
          title: "write_note first",
          decision: "allowed",
          by: "bypass",
        },
      ]);
      expect(io.of("usage").at(-1)?.usage).toMatchObject({
        input_tokens: 60,
        output_tokens: 13,
        total_tokens: 73,
      });
      expect(transcripts[0]!.tool_calls).toEqual([
        expect.objectContaining({
          name: "write_note",
          kind: "filesystem.write",
          status: "completed",
          approval: "allowed by bypass",
          input: { note: "first" },
          attempt: 1,
        }),
      ]);
      expect(transcripts[0]!.messages.map((m) => m.role)).toEqual([
        "user",
        "system",
        "assistant",
        "tool",
        "assistant",
      ]);
    });

    it("asks the approval callback in manual mode: allow runs the tool, reject returns an error to the model", async () => {
      const note = noteTool();
      const e = await env({ tools: [note.tool] });
      provider.script(e.route, [
        toolCalls([{ name: "write_note", arguments: { note: "yes" } }]),
        toolCalls([{ name: "write_note", arguments: { note: "no" } }]),
        text("Done."),
      ]);
      const asked: string[] = [];
      const { result, io, transcripts } = await attempt(e.runner, e.s, {
        model: "m",
        approvalMode: "manual",
        approve: async (request) => {
          asked.push(`${request.tool.kind}:${request.title}`);
          expect(request).toMatchObject({ runId: "run-1", activationId: "review#1", attempt: 1 });
          return (request.input as { note: string }).note === "yes" ? "allow" : "reject";
        },
      });
      expect(result.status).toBe("completed");
      expect(asked).toEqual(["filesystem.write:write_note yes", "filesystem.write:write_note no"]);
      expect(note.runs).toEqual([{ note: "yes" }]);
      expect(io.of("permission").map((p) => [p.decision, p.by])).toEqual([
        ["allowed", "callback"],
        ["rejected", "callback"],
      ]);
      const results = toolResults(e.requests()[2]!);
      expect(results).toHaveLength(2);
      expect(results[1]!.content).toMatch(/not approved/);
      if (wire === "anthropic") expect(results[1]!.isError).toBe(true);
      expect(transcripts[0]!.tool_calls.map((c) => [c.status, c.approval])).toEqual([
        ["completed", "allowed by callback"],
        ["rejected", "rejected by callback"],
      ]);
    });

    it("rejects what needs approval in manual mode when there is no callback, and runs what does not", async () => {
      const note = noteTool();
      const free = noteTool({ name: "free_note", kind: "todo", target: undefined });
      const e = await env({ tools: [note.tool, free.tool] });
      provider.script(e.route, [
        toolCalls([
          { name: "write_note", arguments: { note: "a" } },
          { name: "free_note", arguments: { note: "b" } },
        ]),
        text("ok"),
      ]);
      const { io } = await attempt(e.runner, e.s, { model: "m", approvalMode: "manual" });
      expect(note.runs).toEqual([]);
      expect(free.runs).toEqual([{ note: "b" }]);
      expect(io.of("permission").map((p) => [p.decision, p.by])).toEqual([
        ["rejected", "manual (no approval callback)"],
      ]);
    });

    it("returns an unknown tool's error to the model and goes on", async () => {
      const e = await env({ tools: [noteTool().tool] });
      provider.script(e.route, [toolCalls([{ name: "nope", arguments: {} }]), text("Sorry.")]);
      const { result, io } = await attempt(e.runner, e.s, { model: "m" });
      expect(result).toMatchObject({ status: "completed", value: { text: "Sorry." } });
      expect(toolResults(e.requests()[1]!)[0]!.content).toMatch(/no tool named "nope"/);
      expect(io.of("tool_call").map((c) => c.status)).toEqual(["failed"]);
    });

    it("falls back to the text emitted during the attempt when the final reply has none", async () => {
      const e = await env({ tools: [noteTool().tool] });
      provider.script(e.route, [
        toolCalls([{ name: "write_note", arguments: { note: "x" } }], { text: "Let me write it down." }),
        text(""),
      ]);
      const { result } = await attempt(e.runner, e.s, { model: "m" });
      expect(result).toEqual({ status: "completed", value: { text: "Let me write it down.", data: null } });
    });

    describe("retries within the attempt", () => {
      it("honours retry-after-ms on a 429, then succeeds", async () => {
        const e = await env();
        provider.script(e.route, [rateLimited({ retryAfterMs: 250 }), text("ok")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result.status).toBe("completed");
        expect(e.requests().map((r) => r.reply?.type)).toEqual(["rate_limited", "text"]);
        expect(io.of("request_retry")).toEqual([
          expect.objectContaining({ retry: 1, delay_ms: 250, error_class: "model_rate_limited" }),
        ]);
      });

      it("honours retry-after in seconds on a 429", async () => {
        const e = await env();
        provider.script(e.route, [rateLimited({ retryAfterSeconds: 3 }), text("ok")]);
        const { io } = await attempt(e.runner, e.s, { model: "m" });
        expect(io.of("request_retry").map((r) => r.delay_ms)).toEqual([3000]);
      });

      it("retries a 500 and an overloaded provider with growing waits", async () => {
        const e = await env();
        provider.script(e.route, [serverError(), overloaded(), text("ok")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result.status).toBe("completed");
        expect(e.requests()).toHaveLength(3);
        expect(io.of("request_retry").map((r) => [r.retry, r.delay_ms, r.error_class])).toEqual([
          [1, 1000, "model_server_error"],
          [2, 2000, "model_overloaded"],
        ]);
      });

      it("fails retryable after llm.retry.max_transient retries", async () => {
        const e = await env({ settings: "llm:\n  retry:\n    max_transient: 2\n" });
        provider.script(e.route, [serverError(), serverError(), serverError(), text("never")]);
        const { result, transcripts } = await attempt(e.runner, e.s, { model: "m" });
        expect(e.requests()).toHaveLength(3);
        expect(result).toMatchObject({
          status: "failed",
          error: { class: "model_server_error", retryable: true, traceback: null },
        });
        expect((result as { error: { message: string } }).error.message).toMatch(
          /after 2 retries within the attempt/,
        );
        expect(transcripts[0]!.outcome).toBe("model_server_error");
      });

      it("never retries an exhausted quota", async () => {
        const e = await env();
        provider.script(e.route, [quotaExhausted(), text("never")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(e.requests()).toHaveLength(1);
        expect(io.of("request_retry")).toEqual([]);
        expect(result).toMatchObject({
          status: "failed",
          error: { class: "model_quota_exhausted", retryable: false },
        });
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

      it("retries a connection dropped mid-reply", async () => {
        const e = await env();
        provider.script(e.route, [dropMidStream({ afterEvents: 2 }), text("whole answer")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "whole answer" } });
        expect(e.requests().map((r) => r.outcome)).toEqual(["dropped", "completed"]);
        expect(io.of("request_retry").map((r) => r.error_class)).toEqual(["model_connection_failed"]);
      });

      it("retries a request that gets no answer within http_read_timeout", async () => {
        const e = await env({ model: { http_read_timeout: 0.3 } });
        provider.script(e.route, [hang({ sendHeaders: stream }), text("in time")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "in time" } });
        expect(e.requests()).toHaveLength(2);
        expect(io.of("request_retry").map((r) => r.error_class)).toEqual(["model_request_timeout"]);
      });

      if (stream) {
        it("retries a stream without a finish reason when stream_requires_finish_reason is set", async () => {
          const e = await env({ model: { stream_requires_finish_reason: true } });
          provider.script(e.route, [endWithoutFinish({ reply: text("half") }), text("whole")]);
          const { result, io } = await attempt(e.runner, e.s, { model: "m" });
          expect(result).toMatchObject({ status: "completed", value: { text: "whole" } });
          expect(io.of("request_retry").map((r) => r.error_class)).toEqual(["model_stream_interrupted"]);
        });

        it("accepts a stream without a finish reason when stream_requires_finish_reason is off", async () => {
          const e = await env();
          provider.script(e.route, [endWithoutFinish({ reply: text("half an answer") })]);
          const { result } = await attempt(e.runner, e.s, { model: "m" });
          expect(result).toMatchObject({ status: "completed", value: { text: "half an answer" } });
          expect(e.requests()).toHaveLength(1);
        });
      }
    });

    describe("context overflow and compaction", () => {
      it("compacts and resends once when the provider's limit is not smaller than the profile's", async () => {
        const note = noteTool();
        const e = await env({ tools: [note.tool], model: { max_context_tokens: 100000 } });
        provider.script(e.route, [
          toolCalls([{ name: "write_note", arguments: { note: "n1" } }]),
          contextOverflow({ limit: 100000 }),
          text("## Goal\nReview.\n## Done so far\nWrote n1."),
          text("Reviewed."),
        ]);
        const { result, io, transcripts } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "Reviewed." } });
        const requests = e.requests();
        expect(requests.map((r) => r.reply?.type)).toEqual([
          "tool_calls",
          "context_overflow",
          "text",
          "text",
        ]);
        const [, , sideCall, resent] = requests;
        expect(systemOf(sideCall!)).toBe(NOTE_INSTRUCTIONS);
        expect(toolNames(sideCall!)).toEqual([]);
        expect(lastUserText(sideCall!)).toContain("write_note");
        expect(userTexts(resent!)).toEqual([
          `Review the change.\n\n${NOTE_HEADER}\n\n## Goal\nReview.\n## Done so far\nWrote n1.`,
        ]);
        expect(io.of("compaction")).toHaveLength(1);
        expect(note.runs).toHaveLength(1);
        expect(transcripts[0]!.messages.some((m) => m.content.startsWith(NOTE_HEADER))).toBe(true);
      });

      it("does not compact when the provider names a smaller window than the profile's", async () => {
        const e = await env({ model: { max_context_tokens: 100000 } });
        provider.script(e.route, [contextOverflow({ limit: 8192 }), text("never")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(e.requests()).toHaveLength(1);
        expect(io.of("compaction")).toEqual([]);
        expect(result).toMatchObject({
          status: "failed",
          error: { class: "model_context_overflow", retryable: false },
        });
        expect((result as { error: { message: string } }).error.message).toMatch(
          /set max_context_tokens: 8192/,
        );
      });

      it("fails, not retried, when the resent request is still too long", async () => {
        const e = await env();
        provider.script(e.route, [
          contextOverflow({ limit: 100000 }),
          text("note"),
          contextOverflow({ limit: 100000 }),
        ]);
        const { result } = await attempt(e.runner, e.s, { model: "m" });
        expect(e.requests()).toHaveLength(3);
        expect(result).toMatchObject({
          status: "failed",
          error: { class: "model_context_overflow", retryable: false },
        });
        expect((result as { error: { message: string } }).error.message).toMatch(
          /compacted and the request was sent once more/,
        );
      });

      it("compacts before a request that would not fit the window, within the note budget", async () => {
        const big: AgentTool = {
          ...noteTool().tool,
          name: "read_big",
          kind: "filesystem.read",
          target: undefined,
          execute: async () => ({ ok: true, output: "x".repeat(16000) }),
        };
        const e = await env({
          tools: [big],
          model: { max_context_tokens: 4000, max_output_tokens: 500 },
          agents: {
            Tester: profileYaml("Tester", [
              "compaction: {last_words_max_output_tokens: 20000, last_words_template: Keep the file names.}",
            ]),
          },
        });
        provider.script(e.route, [
          toolCalls([{ name: "read_big", arguments: { note: "" } }]),
          text("the note"),
          text("Final."),
        ]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(result).toMatchObject({ status: "completed", value: { text: "Final." } });
        const [, sideCall, last] = e.requests();
        expect(systemOf(sideCall!)).toBe(`${NOTE_INSTRUCTIONS}\n\nKeep the file names.`);
        // the note's cap is last_words_max_output_tokens lowered to the model's max_output_tokens
        const cap = (sideCall!.body as { max_tokens?: number }).max_tokens;
        expect(cap).toBe(500);
        expect(lastUserText(last!)).toContain("the note");
        const [c] = io.of("compaction");
        expect(c!.tokens_before).toBeGreaterThan(3000);
        expect(c!.tokens_after).toBeLessThan(c!.tokens_before);
      });

      it("makes no note request when phase4_side_call_token_budget is 0", async () => {
        const e = await env({
          agents: { Tester: profileYaml("Tester", ["compaction: {phase4_side_call_token_budget: 0}"]) },
        });
        provider.script(e.route, [contextOverflow({ limit: 100000 }), text("never")]);
        const { result, io } = await attempt(e.runner, e.s, { model: "m" });
        expect(e.requests()).toHaveLength(1);
        expect(io.of("warning").map((w) => w.code)).toEqual(["compaction_budget_spent"]);
        expect(result).toMatchObject({ status: "failed", error: { class: "model_context_overflow" } });
      });
    });

    it("stops at once when the signal aborts a hanging request, and still writes the transcript", async () => {
      const e = await env();
      provider.script(e.route, [hang({ sendHeaders: stream })]);
      const io = new RecordingIO();
      const pending = attempt(e.runner, e.s, { model: "m", io });
      await provider.received(1);
      io.abort("timeout");
      const { result, transcripts } = await pending;
      expect(result).toMatchObject({ status: "failed", error: { class: "agent_aborted" } });
      expect((result as { error: { message: string } }).error.message).toMatch(/timeout/);
      await provider.idle();
      expect(e.requests()[0]!.outcome).toBe("client_closed");
      expect(transcripts.map((t) => t.outcome)).toEqual(["agent_aborted"]);
    });

    it("continues the conversation on a node retry: a finished tool call does not run again", async () => {
      const note = noteTool();
      const e = await env({ tools: [note.tool] });
      provider.script(e.route, [
        toolCalls([{ name: "write_note", arguments: { note: "once" } }]),
        hang({ sendHeaders: stream }),
        text("Finished."),
      ]);
      const io = new RecordingIO();
      const first = attempt(e.runner, e.s, { model: "m", io });
      await provider.received(2);
      io.abort("timeout");
      const one = await first;
      expect(one.result).toMatchObject({ status: "failed", error: { class: "agent_aborted" } });

      const two = await attempt(e.runner, e.s, { model: "m", attempt: 2, continueFrom: 1 });
      expect(two.result).toMatchObject({ status: "completed", value: { text: "Finished." } });
      expect(note.runs).toEqual([{ note: "once" }]);
      const third = e.requests()[2]!;
      expect(toolResults(third)).toEqual([expect.objectContaining({ content: 'wrote "once"' })]);
      expect(userTexts(third)[0]).toBe("Review the change.");
      const t = two.transcripts[0]!;
      expect(t).toMatchObject({ attempt: 2, continued_from: 1, outcome: "completed" });
      expect(t.messages.map((m) => [m.role, m.attempt])).toEqual([
        ["user", 1],
        ["system", 1],
        ["assistant", 1],
        ["tool", 1],
        ["assistant", 2],
      ]);
      expect(t.tool_calls.map((c) => c.attempt)).toEqual([1]);
      // usage is per attempt
      expect(two.io.of("usage")).toHaveLength(1);
    });

    it("starts again from the input when the agent had finished (continueFrom: null)", async () => {
      const e = await env();
      provider.script(e.route, [text("first answer"), text("second answer")]);
      await attempt(e.runner, e.s, { model: "m" });
      const again = await attempt(e.runner, e.s, { model: "m", attempt: 2, continueFrom: null });
      expect(again.result).toMatchObject({ value: { text: "second answer" } });
      expect(userTexts(e.requests()[1]!)).toEqual(["Review the change."]);
      expect((e.requests()[1]!.body as { messages: unknown[] }).messages.length).toBe(
        wire === "openai" ? 2 : 1,
      );
      expect(again.transcripts[0]!.continued_from).toBeNull();
    });

    it("resolves {{NAME}} in api_key, http_headers and chat_options at each request", async () => {
      const e = await env({
        model: {
          api_key: "{{TEST_KEY}}",
          http_headers: { "X-Team": "{{TEAM}}" },
          chat_options: {
            temperature: 0.2,
            extra_body: { tag: "t-{{TEAM}}" },
            extra_headers: { "X-Extra": "1" },
          },
        },
      });
      provider.script(e.route, [text("ok")]);
      await attempt(e.runner, e.s, { model: "m", env: { TEST_KEY: "sk-from-env", TEAM: "core" } });
      const [r] = e.requests();
      if (wire === "openai") expect(r!.headers["authorization"]).toBe("Bearer sk-from-env");
      else expect(r!.headers["x-api-key"]).toBe("sk-from-env");
      expect(r!.headers["x-team"]).toBe("core");
      expect(r!.headers["x-extra"]).toBe("1");
      expect(r!.body).toMatchObject({ temperature: 0.2, tag: "t-core", max_tokens: 1000 });
    });

    it("fails without a request, not retried, when a template variable is missing", async () => {
      const e = await env({ model: { api_key: "{{MISSING_KEY}}" } });
      const { result, transcripts } = await attempt(e.runner, e.s, { model: "m" });
      expect(e.requests()).toHaveLength(0);
      expect(result).toMatchObject({
        status: "failed",
        error: { class: "model_template_missing", retryable: false },
      });
      expect((result as { error: { message: string } }).error.message).toMatch(/MISSING_KEY/);
      expect(transcripts).toHaveLength(1);
    });

    it("runs a sub-agent on its parent's model and hands its reply back; a failed one returns its error", async () => {
      const e = await env({
        agents: {
          Tester: profileYaml("Tester", ["sub_agents: {agents: [{profile: Helper, tool_name: ask_helper}]}"]),
          Helper: profileYaml("Helper", ["instructions: You help.", "sub_agent_only: true"]),
        },
      });
      const helper = e.s.config.profiles.find((p) => p.name === "Helper")!;
      let parent: ToolsetOptions | null = null;
      const subTool: AgentTool = {
        name: "ask_helper",
        kind: "sub_agent",
        description: "Ask the helper",
        inputSchema: { type: "object", properties: { task: { type: "string" } } },
        activityKind: "sub_agent",
        title: () => "ask_helper",
        execute: (input, context) =>
          parent!.runSubAgent(helper, (input as { task: string }).task, context.signal),
      };
      const profilesBuilt: string[] = [];
      const runner = createNativeRunner({
        sleep: noWait,
        buildToolset: async (options) => {
          profilesBuilt.push(options.profile.name);
          if (options.profile.name === "Tester") parent = options;
          return {
            tools: options.profile.name === "Tester" ? [subTool] : [],
            instructions: [],
            warnings: [],
            close: async () => undefined,
          };
        },
      });
      provider.script(e.route, [
        toolCalls([{ name: "ask_helper", arguments: { task: "find it" } }]),
        text("It is in a.ts."),
        toolCalls([{ name: "ask_helper", arguments: { task: "again" } }]),
        invalidKey(),
        text("Helper found a.ts, then failed."),
      ]);
      const { result, io, transcripts } = await attempt(runner, e.s, { model: "m" });
      expect(result).toMatchObject({
        status: "completed",
        value: { text: "Helper found a.ts, then failed." },
      });
      expect(profilesBuilt).toEqual(["Tester", "Helper", "Helper"]);
      const requests = e.requests();
      expect(requests).toHaveLength(5);
      expect(systemOf(requests[1]!)).toBe("You help.");
      expect(lastUserText(requests[1]!)).toBe("find it");
      expect(toolResults(requests[2]!)[0]).toMatchObject({ content: "It is in a.ts." });
      expect(toolResults(requests[4]!)[1]!.content).toMatch(
        /sub-agent "Helper" failed \(model_auth_failed\)/,
      );
      expect(transcripts[0]!.tool_calls.map((c) => [c.name, c.status])).toEqual([
        ["ask_helper", "completed"],
        ["ask_helper", "failed"],
      ]);
      expect(io.of("usage").at(-1)!.usage.total_tokens).toBeGreaterThan(0);
    });
  });
});

describe("refused at attempt start", () => {
  it("refuses approval mode auto (no approval judge model) with a coded error, sending nothing", async () => {
    const s = await setup({
      models: { c: modelYaml(provider, "openai", "chat") },
      agents: { Tester: profileYaml("Tester") },
    });
    const runner = createNativeRunner({ buildToolset: toolsetOf([]).build });
    const auto = await attempt(runner, s, { model: "c", approvalMode: "auto" });
    expect(auto.result).toMatchObject({
      status: "failed",
      error: { class: "approval_mode_unsupported", retryable: false },
    });
    expect(auto.transcripts.map((t) => t.outcome)).toEqual(["approval_mode_unsupported"]);
    expect(provider.requests).toHaveLength(0);
  });
});
