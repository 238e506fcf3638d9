/*
 * The real AI SDK clients pointed at a provider double, and one way to call them in both modes, so every
 * test runs the same assertions against `generateText` and `streamText` of every wire's provider.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, type LanguageModel, stepCountIs, streamText, type ToolSet } from "ai";
import type { ProviderDouble, Wire } from "../src/index";

export const WIRES_UNDER_TEST: Wire[] = ["openai", "anthropic", "responses"];
export const MODES = ["generate", "stream"] as const;
export type Mode = (typeof MODES)[number];

export const OPENAI_KEY = "sk-test-double-0000abcd";
export const ANTHROPIC_KEY = "test-anthropic-key";

export function modelFor(provider: ProviderDouble, wire: Wire, route: string): LanguageModel {
  if (wire === "openai") {
    const openai = createOpenAICompatible({
      name: "double",
      baseURL: provider.openaiBaseUrl,
      apiKey: OPENAI_KEY,
      includeUsage: true,
    });
    return openai(route);
  }
  if (wire === "responses") {
    // `@ai-sdk/openai`'s Responses model, as the native loop makes it for `api_style: responses`.
    return createOpenAI({ baseURL: provider.openaiBaseUrl, apiKey: OPENAI_KEY }).responses(route);
  }
  return createAnthropic({ baseURL: provider.anthropicBaseUrl, apiKey: ANTHROPIC_KEY })(route);
}

export type CallResult = {
  text: string;
  finishReason: string;
  usage: {
    inputTokens: number | undefined;
    outputTokens: number | undefined;
    totalTokens: number | undefined;
  };
  steps: number;
  toolCalls: Array<{ toolName: string; input: unknown }>;
  /** Errors the stream reported (stream mode), in order. */
  streamErrors: unknown[];
};

export type CallOptions = {
  prompt?: string;
  tools?: ToolSet;
  maxSteps?: number;
  abortSignal?: AbortSignal;
  maxRetries?: number;
};

/**
 * Calls the model once (with `stopWhen: stepCountIs(maxSteps)` when tools are given) and returns what the
 * SDK reports. A failure is thrown as the SDK threw it or, in stream mode, as the first error the stream
 * reported (or the error its consumption threw).
 */
export async function call(model: LanguageModel, mode: Mode, options: CallOptions = {}): Promise<CallResult> {
  const common = {
    model,
    prompt: options.prompt ?? "Say hello.",
    maxRetries: options.maxRetries ?? 0,
    maxOutputTokens: 256,
    ...(options.tools ? { tools: options.tools, stopWhen: stepCountIs(options.maxSteps ?? 5) } : {}),
    ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
  };
  if (mode === "generate") {
    const result = await generateText(common);
    return {
      text: result.text,
      finishReason: result.finishReason,
      usage: pickUsage(result.totalUsage),
      steps: result.steps.length,
      toolCalls: result.steps.flatMap((step) =>
        step.toolCalls.map(({ toolName, input }) => ({ toolName, input })),
      ),
      streamErrors: [],
    };
  }
  const streamErrors: unknown[] = [];
  const result = streamText({ ...common, onError: ({ error }) => void streamErrors.push(error) });
  try {
    for await (const _part of result.fullStream) {
      // consumed for its side effects: errors reach onError
    }
  } catch (error) {
    throw streamErrors[0] ?? error;
  }
  const fatal = streamErrors.find((error) => !isFinishlessStreamError(error));
  if (fatal !== undefined) throw fatal;
  const [text, finishReason, usage, steps] = await Promise.all([
    result.text,
    result.finishReason,
    result.totalUsage,
    result.steps,
  ]);
  return {
    text,
    finishReason,
    usage: pickUsage(usage),
    steps: steps.length,
    toolCalls: steps.flatMap((step) => step.toolCalls.map(({ toolName, input }) => ({ toolName, input }))),
    streamErrors,
  };
}

/** openai-compatible reports a stream without a finish reason as an error part, and still finishes the step. */
function isFinishlessStreamError(error: unknown): boolean {
  return error instanceof Error && error.message === "Response stream ended without a finish reason.";
}

function pickUsage(usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number }) {
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens };
}

/** The fields of the SDK's `APICallError` that tests assert on (read structurally, not by `instanceof`). */
export function apiCallError(error: unknown) {
  const e = error as {
    name?: string;
    statusCode?: number;
    message?: string;
    isRetryable?: boolean;
    responseHeaders?: Record<string, string>;
    cause?: unknown;
  };
  return {
    name: e.name,
    statusCode: e.statusCode,
    message: e.message,
    isRetryable: e.isRetryable,
    responseHeaders: e.responseHeaders,
    cause: e.cause,
  };
}

export async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail, and it succeeded");
}
