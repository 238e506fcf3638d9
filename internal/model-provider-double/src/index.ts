/**
 * @module @icode/model-provider-double
 * A loopback HTTP server that stands in for a model provider in tests and benchmarks: it speaks the OpenAI
 * Chat Completions, Anthropic Messages and OpenAI Responses wire formats (plain JSON and SSE streams),
 * answers each request with the next reply scripted for its `model`, and records every request with what
 * it asked (`prompt`: instructions, messages, tool calls and results, tools, the output cap).
 *
 * @example
 * import { startProviderDouble, text, toolCalls, rateLimited } from "@icode/model-provider-double";
 * const provider = await startProviderDouble();
 * provider.script("model-a", [rateLimited({ retryAfterSeconds: 1 }), toolCalls([{ name: "ls", arguments: {} }]), text("done")]);
 * const openai = createOpenAICompatible({ name: "double", baseURL: provider.openaiBaseUrl, apiKey: "k" });
 * const anthropic = createAnthropic({ baseURL: provider.anthropicBaseUrl, apiKey: "k" });
 * const responses = createOpenAI({ baseURL: provider.openaiBaseUrl, apiKey: "k" }).responses;
 * // … run the agent against openai("model-a") …
 * provider.requestsFor("model-a").map((r) => r.reply?.type); // → ["rate_limited", "tool_calls", "text"]
 * provider.requestsFor("model-a")[2]?.prompt.items.map((i) => i.type); // → ["message", "tool_call", "tool_result"]
 * await provider.close();
 */
export { PROVIDER_DOUBLE_CLI } from "./cli-path";
export {
  isProviderDoubleError,
  PROVIDER_DOUBLE_CODES,
  type ProviderDoubleCode,
  ProviderDoubleCodeSchema,
  ProviderDoubleError,
} from "./errors";
export { type ParsedRequest, ParsedRequestSchema, WIRES, type Wire, WireSchema } from "./parsed-request";
export {
  lastUserText,
  type Prompt,
  type PromptItem,
  PromptItemSchema,
  PromptSchema,
  type ToolResult,
  ToolResultSchema,
  toolResults,
} from "./prompt";
export {
  contextOverflow,
  delayed,
  dropMidStream,
  endWithoutFinish,
  finalJson,
  hang,
  httpError,
  invalidKey,
  overloaded,
  quotaExhausted,
  rateLimited,
  reportBlocked,
  respondWith,
  serverError,
  submitHandoff,
  text,
  toolCalls,
} from "./replies";
export {
  ANTHROPIC_QUOTA_SHAPES,
  type ContentReply,
  ContentReplySchema,
  type ContextOverflowReply,
  ContextOverflowReplySchema,
  type DataReply,
  DataReplySchema,
  type DropMidStreamReply,
  DropMidStreamReplySchema,
  type EndWithoutFinishReply,
  EndWithoutFinishReplySchema,
  type FunctionReply,
  FunctionReplySchema,
  type HangReply,
  HangReplySchema,
  type HttpErrorReply,
  HttpErrorReplySchema,
  type InvalidKeyReply,
  InvalidKeyReplySchema,
  type OverloadedReply,
  OverloadedReplySchema,
  type QuotaExhaustedReply,
  QuotaExhaustedReplySchema,
  type RateLimitedReply,
  RateLimitedReplySchema,
  type Reply,
  type ReplyFunction,
  ReplySchema,
  type ServerErrorReply,
  ServerErrorReplySchema,
  type TextReply,
  TextReplySchema,
  type ToolCall,
  ToolCallSchema,
  type ToolCallsReply,
  ToolCallsReplySchema,
  type Usage,
  UsageSchema,
} from "./reply";
export {
  REPLY_SOURCES,
  REQUEST_OUTCOMES,
  type RecordedRequest,
  RecordedRequestSchema,
  type ReplySource,
  ReplySourceSchema,
  type RequestOutcome,
  RequestOutcomeSchema,
} from "./request";
export { loadScriptFile, type ScriptFile, ScriptFileSchema } from "./script-file";
export {
  DEFAULT_REPLY,
  ProviderDouble,
  type ProviderDoubleOptions,
  ProviderDoubleOptionsSchema,
  startProviderDouble,
} from "./server";
export { type ProviderDoubleStats, ProviderDoubleStatsSchema } from "./stats";
