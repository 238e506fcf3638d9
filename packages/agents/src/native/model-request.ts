import {
  generateText,
  type JSONValue,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  streamText,
  type ToolSet,
} from "ai";
import { classifyModelError, FINISHLESS_STREAM_MESSAGE, failure, type ModelFailure } from "./classify";
import type { PendingCall } from "./conversation";

/** One model request: the SDK's own retries off, no tool executed by the SDK (no tool has `execute`). */
export interface ModelRequest {
  readonly model: LanguageModel;
  readonly system: string;
  readonly messages: ModelMessage[];
  readonly tools: ToolSet | undefined;
  readonly maxOutputTokens: number;
  readonly stream: boolean;
  /** Treat a stream that ends without its finish reason as cut short (`stream_requires_finish_reason`). */
  readonly requireFinishReason: boolean;
  readonly signal: AbortSignal;
  /** Streamed text, as it comes (only when streaming). */
  readonly onText?: (delta: string) => void;
  readonly onThought?: (delta: string) => void;
  /** A part other than text is about to be handled: flush what is held. */
  readonly onBoundary?: () => void;
}

/** What one successful request gave: the messages to append, the reply's text, the tool calls to run. */
export interface ModelReply {
  readonly messages: ModelMessage[];
  readonly text: string;
  readonly reasoning: string;
  /** Every tool call of the reply: the loop answers each (results the SDK wrote itself are left out). */
  readonly toolCalls: PendingCall[];
  readonly finishReason: string;
  readonly usage: LanguageModelUsage | undefined;
  readonly warnings: string[];
}

/** A request that failed, with its classification. */
export class ModelRequestError extends Error {
  readonly failure: ModelFailure;
  constructor(f: ModelFailure, cause?: unknown) {
    super(f.message, cause === undefined ? undefined : { cause });
    this.name = "ModelRequestError";
    this.failure = f;
  }
}

export async function sendModelRequest(request: ModelRequest): Promise<ModelReply> {
  const common = {
    model: request.model,
    system: request.system === "" ? undefined : request.system,
    messages: request.messages,
    maxOutputTokens: request.maxOutputTokens,
    maxRetries: 0,
    abortSignal: request.signal,
    ...(request.tools === undefined ? {} : { tools: request.tools }),
  };
  if (!request.stream) {
    try {
      const result = await generateText(common);
      return reply(result.response.messages, result.text, result.reasoningText ?? "", result.toolCalls, {
        finishReason: result.finishReason,
        usage: result.usage,
        warnings: result.warnings ?? [],
      });
    } catch (error) {
      throw new ModelRequestError(classifyModelError(error, request.signal.aborted), error);
    }
  }

  // The reply is built from the stream's parts as they pass (as the SDK builds its response messages), so
  // nothing waits on the result's promises after the stream ends.
  const errors: unknown[] = [];
  let finishReason: string | null = null;
  let rawFinishReason: string | undefined;
  let usage: LanguageModelUsage | undefined;
  const warnings: unknown[] = [];
  const content: StreamedPart[] = [];
  const open = new Map<string, StreamedPart & { text: string }>();
  const calls: SdkToolCall[] = [];
  let text = "";
  let reasoning = "";
  const result = streamText({ ...common, onError: () => undefined });
  try {
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta": {
          request.onText?.(part.text);
          text += part.text;
          const active = open.get(`t${part.id}`);
          if (active === undefined)
            content.push({ type: "text", text: part.text, providerMetadata: part.providerMetadata });
          else {
            active.text += part.text;
            active.providerMetadata = part.providerMetadata ?? active.providerMetadata;
          }
          break;
        }
        case "reasoning-delta": {
          request.onThought?.(part.text);
          reasoning += part.text;
          const active = open.get(`r${part.id}`);
          if (active !== undefined) {
            active.text += part.text;
            active.providerMetadata = part.providerMetadata ?? active.providerMetadata;
          }
          break;
        }
        case "text-start":
        case "reasoning-start": {
          request.onBoundary?.();
          const started = {
            type: part.type === "text-start" ? ("text" as const) : ("reasoning" as const),
            text: "",
            providerMetadata: part.providerMetadata,
          };
          content.push(started);
          open.set(`${part.type === "text-start" ? "t" : "r"}${part.id}`, started);
          break;
        }
        case "text-end":
        case "reasoning-end": {
          const key = `${part.type === "text-end" ? "t" : "r"}${part.id}`;
          const active = open.get(key);
          if (active !== undefined)
            active.providerMetadata = part.providerMetadata ?? active.providerMetadata;
          open.delete(key);
          break;
        }
        case "tool-call":
          request.onBoundary?.();
          calls.push(part);
          content.push({
            type: "tool-call",
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.invalid === true && typeof part.input !== "object" ? {} : part.input,
            providerExecuted: part.providerExecuted,
            providerMetadata: part.providerMetadata,
          });
          break;
        case "start-step":
          warnings.push(...part.warnings);
          break;
        case "error":
          errors.push(part.error);
          break;
        case "finish-step":
          finishReason = part.finishReason;
          rawFinishReason = part.rawFinishReason;
          usage = part.usage;
          break;
        case "abort":
          throw new ModelRequestError(failure("agent_aborted", "the request was aborted"));
        default:
          request.onBoundary?.();
      }
    }
  } catch (error) {
    if (error instanceof ModelRequestError) throw error;
    throw new ModelRequestError(classifyModelError(error, request.signal.aborted), error);
  }
  request.onBoundary?.();
  if (request.signal.aborted)
    throw new ModelRequestError(failure("agent_aborted", "the request was aborted"));
  const fatal = errors.find((e) => (e as { message?: unknown }).message !== FINISHLESS_STREAM_MESSAGE);
  if (fatal !== undefined) throw new ModelRequestError(classifyModelError(fatal, false), fatal);
  // No finish reason on the wire: OpenAI-compatible flags it as an error part, Anthropic leaves it unset.
  const finishless =
    errors.length > 0 || finishReason === null || rawFinishReason === undefined || rawFinishReason === "";
  if (request.requireFinishReason && finishless) {
    throw new ModelRequestError(
      failure(
        "model_stream_interrupted",
        "the reply stream ended without a finish reason (stream_requires_finish_reason: true)",
      ),
    );
  }
  const assistant = content
    .filter((p) => !(p.type === "text" && p.text === ""))
    .map(({ providerMetadata, ...p }) =>
      providerMetadata === undefined ? p : { ...p, providerOptions: providerMetadata },
    );
  const messages: ModelMessage[] =
    assistant.length === 0 ? [] : [{ role: "assistant", content: assistant as AssistantContentPart[] }];
  return reply(messages, text, reasoning, calls, { finishReason: finishReason ?? "other", usage, warnings });
}

type AssistantContentPart = Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string>[number];

type StreamedPart =
  | { type: "text" | "reasoning"; text: string; providerMetadata: ProviderMetadata | undefined }
  | {
      type: "tool-call";
      toolCallId: string;
      toolName: string;
      input: unknown;
      providerExecuted: boolean | undefined;
      providerMetadata: ProviderMetadata | undefined;
    };

type ProviderMetadata = Record<string, Record<string, JSONValue | undefined>>;

interface SdkToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid?: boolean;
  error?: unknown;
  providerExecuted?: boolean;
}

function reply(
  messages: ModelMessage[],
  text: string,
  reasoning: string,
  calls: readonly SdkToolCall[],
  rest: { finishReason: string; usage: LanguageModelUsage | undefined; warnings: readonly unknown[] },
): ModelReply {
  // Results the SDK wrote itself (tool-error parts of invalid calls) are left out: the loop answers every call.
  const own = messages.map((m) =>
    m.role === "tool" ? { ...m, content: m.content.filter((p) => p.type !== "tool-result") } : m,
  );
  const kept = own.filter((m) => !(m.role === "tool" && m.content.length === 0));
  return {
    messages: kept,
    text,
    reasoning,
    toolCalls: calls
      .filter((c) => c.providerExecuted !== true)
      .map((c) => ({
        toolCallId: c.toolCallId,
        toolName: c.toolName,
        input: c.input ?? {},
        invalid: c.invalid === true ? describeInvalid(c.error) : null,
      })),
    finishReason: rest.finishReason,
    usage: rest.usage,
    warnings: rest.warnings.map(warningText),
  };
}

function describeInvalid(error: unknown): string {
  return typeof error === "object" && error !== null && typeof (error as Error).message === "string"
    ? (error as Error).message
    : "the tool call could not be read";
}

/** The SDK's call warnings (`{ type: "unsupported", feature, details }`, `{ type: "other", message }`) as text. */
function warningText(w: unknown): string {
  const x = (typeof w === "object" && w !== null ? w : {}) as Record<string, unknown>;
  if (typeof x["message"] === "string") return x["message"];
  const what = [x["feature"], x["setting"], x["tool"]].find((v) => typeof v === "string") as
    | string
    | undefined;
  const details = typeof x["details"] === "string" ? `: ${x["details"]}` : "";
  return what === undefined ? JSON.stringify(w) : `${String(x["type"] ?? "warning")} ${what}${details}`;
}
