import { type AgentErrorClass, TRANSIENT_AGENT_CLASSES } from "../codes";

/**
 * What went wrong with one model request, read from what the AI SDK threw or streamed (an `APICallError`
 * with the status, the parsed error body and the response headers, or the fetch error under it). The SDK's
 * own `isRetryable` is not used: it marks OpenAI's `insufficient_quota` 429 retryable, so the class comes
 * from the status AND the body.
 */
export interface ModelFailure {
  readonly class: AgentErrorClass;
  /** Retried within the attempt (agent-profiles.md 4.4). */
  readonly transient: boolean;
  readonly message: string;
  readonly status: number | null;
  /** Response headers (`retry-after`, `retry-after-ms`), when there was a response. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** For a context overflow: the window the provider named, or null. */
  readonly namedLimit: number | null;
}

/** The SDK's message for an OpenAI-compatible stream that ended without a finish reason. */
export const FINISHLESS_STREAM_MESSAGE = "Response stream ended without a finish reason.";

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  statusCode?: unknown;
  responseHeaders?: unknown;
  data?: unknown;
  responseBody?: unknown;
  cause?: unknown;
}

const TIMEOUT_CODES = new Set([
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
]);

export function failure(
  cls: AgentErrorClass,
  message: string,
  extra: Partial<Pick<ModelFailure, "status" | "headers" | "namedLimit">> = {},
): ModelFailure {
  return {
    class: cls,
    transient: TRANSIENT_AGENT_CLASSES.has(cls),
    message,
    status: extra.status ?? null,
    headers: extra.headers,
    namedLimit: extra.namedLimit ?? null,
  };
}

/** Classifies a failed model request. `aborted`: the attempt's signal fired (the error is then its echo). */
export function classifyModelError(error: unknown, aborted: boolean): ModelFailure {
  const e = asErrorLike(error);
  const message = describe(error);
  if (aborted || isAbort(error)) return failure("agent_aborted", message);

  const status = typeof e?.statusCode === "number" ? e.statusCode : null;
  const headers = isStringRecord(e?.responseHeaders) ? e.responseHeaders : undefined;
  const body = bodyOf(e);
  const extra = { status, headers };

  // Below the HTTP status: the connection or the fetch timers (also mid-body, after a 200).
  const codes = causeCodes(error);
  if (status === null || status < 400) {
    if (codes.some((c) => TLS_CODE.test(c)))
      return failure(
        "model_tls_failed",
        `the provider's TLS certificate was refused (${message}); fix the certificate, or set verify_ssl: false in the model profile`,
        extra,
      );
    if (codes.some((c) => TIMEOUT_CODES.has(c)))
      return failure("model_request_timeout", `the request timed out (${message})`, extra);
    if (e?.name === "AI_APICallError" || isConnectionError(error, codes))
      return failure("model_connection_failed", message, extra);
    if (e?.name === "AI_InvalidResponseDataError" && e.message === FINISHLESS_STREAM_MESSAGE)
      return failure("model_stream_interrupted", message, extra);
    if (typeof e?.name === "string" && RESPONSE_ERRORS.has(e.name))
      return failure("model_response_invalid", message, extra);
    return failure("agent_internal_error", message, extra);
  }

  const text = `${message} ${body.code} ${body.type}`.toLowerCase();
  if (status === 429) {
    return body.code === "insufficient_quota" || body.type === "insufficient_quota" || QUOTA.test(text)
      ? failure("model_quota_exhausted", message, extra)
      : failure("model_rate_limited", message, extra);
  }
  if (status === 402) return failure("model_quota_exhausted", message, extra);
  if (status === 401) return failure("model_auth_failed", message, extra);
  if (status === 403) {
    return QUOTA.test(text)
      ? failure("model_quota_exhausted", message, extra)
      : failure("model_auth_failed", message, extra);
  }
  if (status === 408) return failure("model_request_timeout", message, extra);
  if (status === 413 || body.code === "context_length_exceeded" || OVERFLOW.test(message)) {
    return failure("model_context_overflow", message, { ...extra, namedLimit: namedLimit(message) });
  }
  if (status === 400 && QUOTA.test(text)) return failure("model_quota_exhausted", message, extra);
  if (status === 529 || status === 503 || body.type === "overloaded_error" || /overloaded/iu.test(message)) {
    return failure("model_overloaded", message, extra);
  }
  if (status >= 500) return failure("model_server_error", message, extra);
  return failure("model_request_rejected", message, extra);
}

/** Node's codes for a refused certificate (`DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED`, …). */
const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_/u;

const RESPONSE_ERRORS = new Set([
  "AI_InvalidResponseDataError",
  "AI_JSONParseError",
  "AI_TypeValidationError",
  "AI_NoContentGeneratedError",
  "AI_NoOutputGeneratedError",
  "AI_EmptyResponseBodyError",
]);
const QUOTA = /insufficient_quota|exceeded your current quota|credit balance|billing|quota/iu;
const OVERFLOW =
  /context_length_exceeded|maximum context length|prompt is too long|context window|too many (input )?tokens|exceeds the context/iu;

/** The context window a provider's overflow message names, or null. */
export function namedLimit(message: string): number | null {
  const patterns = [
    /maximum context length is (\d+)/iu,
    /tokens? > (\d+) maximum/iu,
    /context (?:window|length) (?:of|is) (\d+)/iu,
    /limit of (\d+) tokens/iu,
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(message);
    if (found?.[1] !== undefined) return Number(found[1]);
  }
  return null;
}

function asErrorLike(error: unknown): ErrorLike | null {
  return typeof error === "object" && error !== null ? (error as ErrorLike) : null;
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `code` and `type` of the parsed error body (`{ error: { code, type } }`), as strings. */
function bodyOf(e: ErrorLike | null): { code: string; type: string } {
  let data: unknown = e?.data;
  if (data === undefined && typeof e?.responseBody === "string") {
    try {
      data = JSON.parse(e.responseBody);
    } catch {
      data = undefined;
    }
  }
  const inner = (data as { error?: { code?: unknown; type?: unknown } } | undefined)?.error;
  return {
    code: typeof inner?.code === "string" ? inner.code : "",
    type: typeof inner?.type === "string" ? inner.type : "",
  };
}

function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth += 1) {
    const code = (current as ErrorLike).code;
    if (typeof code === "string") codes.push(code);
    current = (current as ErrorLike).cause;
  }
  return codes;
}

function isConnectionError(error: unknown, codes: string[]): boolean {
  if (codes.some((c) => c.startsWith("UND_ERR") || c.startsWith("ECONN") || c === "EPIPE")) return true;
  const e = asErrorLike(error);
  return e?.name === "TypeError" && (e.message === "terminated" || e.message === "fetch failed");
}

function isAbort(error: unknown): boolean {
  const e = asErrorLike(error);
  return e?.name === "AbortError" || e?.name === "ResponseAborted";
}

/** The error's message with the messages of its causes (`Failed to process successful response: terminated`). */
export function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth += 1) {
    const text =
      typeof current === "object" && typeof (current as ErrorLike).message === "string"
        ? ((current as ErrorLike).message as string)
        : String(current);
    if (text !== "" && !parts.includes(text)) parts.push(text);
    current = typeof current === "object" ? (current as ErrorLike).cause : undefined;
  }
  return parts.join(": ") || "unknown error";
}
