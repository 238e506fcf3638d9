import { type CallToolResult, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { appendCallLog } from "./call-log";
import type { McpDoubleOptions, ToolName } from "./options";

/** Largest `big` result: 64 MiB of text. */
export const BIG_MAX_CHARS = 64 * 1024 * 1024;
/** Longest `slow` wait: ten minutes. */
export const SLOW_MAX_MS = 600_000;
/** The prompt every double serves unless `prompts: false`. */
export const PROMPT_NAME = "greet";

/** What one server process counts: calls of `count`, and calls of any tool. */
export type CallCounter = { count: number; calls: number };

/** A fresh counter; give one to every server built in one process so `count` counts process-wide. */
export function createCallCounter(): CallCounter {
  return { count: 0, calls: 0 };
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** `chars` characters of a repeating "0123456789" pattern, so a cut shows where it was made. */
export function bigText(chars: number): string {
  return "0123456789".repeat(Math.ceil(chars / 10)).slice(0, chars);
}

/**
 * Builds one `McpServer` with the test tools `options.tools` (each named `prefix + tool`), the `greet`
 * prompt and the instructions. `transport` only labels the call log; `counter` is shared by every
 * server of one process (HTTP builds a server per request).
 */
export function createMcpDoubleServer(
  options: McpDoubleOptions,
  counter: CallCounter,
  transport: "stdio" | "http",
): McpServer {
  const server = new McpServer(
    { name: options.name, version: "0.1.0" },
    options.instructions === null ? {} : { instructions: options.instructions },
  );
  const offered = new Set<ToolName>(options.tools);
  const named = (tool: ToolName) => `${options.prefix}${tool}`;
  const logged = (tool: ToolName, args: Record<string, unknown>, result: CallToolResult): CallToolResult => {
    counter.calls += 1;
    if (options.log !== undefined) {
      appendCallLog(options.log, {
        event: "call",
        pid: process.pid,
        ts: Date.now(),
        server: options.name,
        transport,
        tool: named(tool),
        arguments: args,
        isError: result.isError === true,
      });
    }
    return result;
  };

  if (offered.has("echo")) {
    server.registerTool(
      named("echo"),
      { description: "Returns the text it was given.", inputSchema: z.object({ text: z.string() }) },
      async (args) => logged("echo", args, text(args.text)),
    );
  }
  if (offered.has("add")) {
    server.registerTool(
      named("add"),
      {
        description: "Adds two numbers.",
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        outputSchema: z.object({ sum: z.number() }),
      },
      async (args) => {
        const sum = args.a + args.b;
        return logged("add", args, { ...text(String(sum)), structuredContent: { sum } });
      },
    );
  }
  if (offered.has("slow")) {
    server.registerTool(
      named("slow"),
      {
        description: "Waits `ms` milliseconds, then answers (for timeouts and cancellation).",
        inputSchema: z.object({ ms: z.number().int().min(0).max(SLOW_MAX_MS) }),
      },
      async (args, ctx) => {
        try {
          await sleep(args.ms, ctx.mcpReq.signal);
        } catch (error) {
          logged("slow", args, { ...text(`cancelled before ${args.ms} ms`), isError: true });
          throw error;
        }
        return logged("slow", args, text(`waited ${args.ms} ms`));
      },
    );
  }
  if (offered.has("big")) {
    server.registerTool(
      named("big"),
      {
        description: "Returns a text of exactly `chars` characters (for result size limits).",
        inputSchema: z.object({ chars: z.number().int().min(0).max(BIG_MAX_CHARS) }),
      },
      async (args) => logged("big", args, text(bigText(args.chars))),
    );
  }
  if (offered.has("fail")) {
    server.registerTool(
      named("fail"),
      {
        description: "Answers with a tool error carrying `message`.",
        inputSchema: z.object({ message: z.string() }),
      },
      async (args) => logged("fail", args, { ...text(args.message), isError: true }),
    );
  }
  if (offered.has("count")) {
    server.registerTool(
      named("count"),
      {
        description: "Returns how many times count was called in this server process, this call included.",
        inputSchema: z.object({}),
        outputSchema: z.object({ count: z.number().int(), calls: z.number().int() }),
      },
      async () => {
        counter.count += 1;
        const structuredContent = { count: counter.count, calls: counter.calls + 1 };
        return logged("count", {}, { ...text(String(counter.count)), structuredContent });
      },
    );
  }
  if (options.prompts) {
    server.registerPrompt(
      PROMPT_NAME,
      { description: "Asks the model to greet someone.", argsSchema: z.object({ name: z.string() }) },
      ({ name }) => ({
        messages: [
          { role: "user" as const, content: { type: "text" as const, text: `Say hello to ${name}.` } },
        ],
      }),
    );
  }
  return server;
}
