import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./retry";

describe("retry delays (4.4)", () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [10, 512_000],
    [11, 600_000],
    [50, 600_000],
  ])("retry %i waits %i ms", (k, ms) => {
    expect(retryDelayMs(k)).toBe(ms);
  });

  const now = Date.parse("2026-01-01T00:00:00Z");
  it.each<[string, Record<string, string>, number]>([
    ["Retry-After seconds", { "Retry-After": "7" }, 7000],
    ["Retry-After seconds capped", { "retry-after": "3600" }, 600_000],
    ["Retry-After HTTP date", { "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }, 30_000],
    ["Retry-After date in the past", { "retry-after": "Wed, 31 Dec 2025 23:00:00 GMT" }, 0],
    ["retry-after-ms wins", { "retry-after-ms": "250", "retry-after": "9" }, 250],
    ["retry-after-ms capped", { "Retry-After-Ms": "9999999" }, 600_000],
    ["an unreadable header keeps the exponential wait", { "retry-after": "soon" }, 4000],
  ])("%s", (_t, headers, ms) => {
    expect(retryDelayMs(3, headers, now)).toBe(ms);
  });

  it("reads a fetch Headers object", () => {
    expect(retryDelayMs(1, new Headers({ "Retry-After": "2" }), now)).toBe(2000);
  });
});
