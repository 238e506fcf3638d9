import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import { classifyModelError, namedLimit } from "./classify";

function apiError(
  statusCode: number | undefined,
  message: string,
  data?: unknown,
  headers?: Record<string, string>,
) {
  return new APICallError({
    message,
    url: "http://127.0.0.1/v1/chat/completions",
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(headers === undefined ? {} : { responseHeaders: headers }),
    data,
  });
}

describe("classifyModelError", () => {
  it.each([
    [429, "Rate limit reached", { error: { code: "rate_limit_exceeded" } }, "model_rate_limited", true],
    [
      429,
      "You exceeded your current quota",
      { error: { code: "insufficient_quota", type: "insufficient_quota" } },
      "model_quota_exhausted",
      false,
    ],
    [
      400,
      "Your credit balance is too low to access the Anthropic API.",
      { error: { type: "invalid_request_error" } },
      "model_quota_exhausted",
      false,
    ],
    [
      402,
      "There is a problem with your billing",
      { error: { type: "billing_error" } },
      "model_quota_exhausted",
      false,
    ],
    [
      403,
      "Your API key does not have permission",
      { error: { type: "permission_error" } },
      "model_auth_failed",
      false,
    ],
    [401, "invalid x-api-key", { error: { type: "authentication_error" } }, "model_auth_failed", false],
    [500, "Internal server error", { error: { type: "api_error" } }, "model_server_error", true],
    [529, "Overloaded", { error: { type: "overloaded_error" } }, "model_overloaded", true],
    [
      503,
      "The engine is currently overloaded",
      { error: { type: "server_error" } },
      "model_overloaded",
      true,
    ],
    [408, "Request timeout", {}, "model_request_timeout", true],
    [
      404,
      "The model `m` does not exist.",
      { error: { code: "model_not_found" } },
      "model_request_rejected",
      false,
    ],
    [
      400,
      "This model's maximum context length is 8192 tokens.",
      { error: { code: "context_length_exceeded" } },
      "model_context_overflow",
      false,
    ],
    [
      400,
      "prompt is too long: 9000 tokens > 8192 maximum",
      { error: { type: "invalid_request_error" } },
      "model_context_overflow",
      false,
    ],
  ] as const)("%i %s → %s", (status, message, data, cls, transient) => {
    const f = classifyModelError(apiError(status, message, data), false);
    expect(f).toMatchObject({ class: cls, transient, status });
  });

  it("keeps the response headers for retry-after", () => {
    const f = classifyModelError(apiError(429, "slow down", {}, { "retry-after-ms": "250" }), false);
    expect(f.headers).toEqual({ "retry-after-ms": "250" });
  });

  it("reads the window an overflow names", () => {
    expect(
      classifyModelError(apiError(400, "prompt is too long: 150 tokens > 100 maximum", {}), false).namedLimit,
    ).toBe(100);
    expect(namedLimit("This model's maximum context length is 8192 tokens. However…")).toBe(8192);
    expect(namedLimit("too long")).toBeNull();
  });

  it("tells timeouts from dropped connections by the fetch error's cause", () => {
    const timeout = new TypeError("fetch failed", {
      cause: Object.assign(new Error("Headers Timeout Error"), { code: "UND_ERR_HEADERS_TIMEOUT" }),
    });
    const wrapped = new APICallError({
      message: "Cannot connect to API: Headers Timeout Error",
      url: "u",
      requestBodyValues: {},
      cause: timeout,
      isRetryable: true,
    });
    expect(classifyModelError(wrapped, false)).toMatchObject({
      class: "model_request_timeout",
      transient: true,
    });
    const dropped = new APICallError({
      message: "Failed to process successful response",
      url: "u",
      requestBodyValues: {},
      statusCode: 200,
      cause: new TypeError("terminated"),
    });
    expect(classifyModelError(dropped, false)).toMatchObject({
      class: "model_connection_failed",
      transient: true,
    });
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    expect(classifyModelError(refused, false).class).toBe("model_connection_failed");
  });

  it("does not retry certificate failures", () => {
    const cert = new TypeError("fetch failed", {
      cause: Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
    });
    const wrapped = new APICallError({
      message: "Cannot connect to API: self-signed certificate",
      url: "u",
      requestBodyValues: {},
      cause: cert,
    });
    expect(classifyModelError(wrapped, false)).toMatchObject({ class: "model_tls_failed", transient: false });
  });

  it("reports an aborted request as aborted, whatever the error", () => {
    expect(classifyModelError(apiError(500, "x", {}), true).class).toBe("agent_aborted");
    expect(
      classifyModelError(
        Object.assign(new Error("This operation was aborted"), { name: "AbortError" }),
        false,
      ).class,
    ).toBe("agent_aborted");
  });
});
