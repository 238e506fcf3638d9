import type { ResolvedSettings } from "./settings";

/** `llm.retry.max_transient` above this becomes this. */
export const MAX_TRANSIENT_RETRIES = 50;
/** Longest wait before a retry, in milliseconds (10 minutes). */
export const MAX_RETRY_DELAY_MS = 600_000;

/**
 * Transient-error retries after the first try of a model request (agent-profiles.md 4.4): the setting, or
 * when it is unset 18 for `icode workflow run` / `icode run` (`"cli"`) and 10 for interactive and server
 * modes; values above 50 become 50, `0` turns retries off.
 */
export function maxTransientRetries(
  settings: Pick<ResolvedSettings, "maxTransient">,
  mode: "cli" | "interactive",
): number {
  const value = settings.maxTransient.value;
  if (value === null) return mode === "cli" ? 18 : 10;
  return Math.min(Math.max(0, Math.trunc(value)), MAX_TRANSIENT_RETRIES);
}

export type RetryHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * How long to wait before retry `k` (1 for the first retry), in milliseconds: `min(600, 2^(k-1))` seconds,
 * replaced by a `retry-after-ms` header, else a `Retry-After` header (seconds or an HTTP date), capped at
 * 600 seconds. A date in the past means no wait. `now` is the clock for HTTP dates.
 */
export function retryDelayMs(k: number, headers?: RetryHeaders, now: number = Date.now()): number {
  const ms = header(headers, "retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/u.test(ms))
    return Math.min(Math.ceil(Number(ms)), MAX_RETRY_DELAY_MS);
  const after = header(headers, "retry-after");
  if (after !== null) {
    if (/^\s*\d+(\.\d+)?\s*$/u.test(after))
      return Math.min(Math.ceil(Number(after) * 1000), MAX_RETRY_DELAY_MS);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.min(Math.max(0, date - now), MAX_RETRY_DELAY_MS);
  }
  const exponent = Math.max(0, Math.trunc(k) - 1);
  return exponent >= 10 ? MAX_RETRY_DELAY_MS : Math.min(2 ** exponent * 1000, MAX_RETRY_DELAY_MS);
}

function header(headers: RetryHeaders | undefined, name: string): string | null {
  if (headers === undefined) return null;
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get(n: string): string | null }).get(name);
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  )) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    return typeof value === "string" ? value : (value[0] ?? null);
  }
  return null;
}
