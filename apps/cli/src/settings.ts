/**
 * `ICODE_LOAD_TIMEOUT_SECONDS` shortens the 60-second load-and-build limit (a finite positive number,
 * at most 60; anything else is ignored). Meant for tests: it can shorten the limit, never lengthen it.
 */
export function loadTimeoutMs(env: Record<string, string | undefined>): number | null {
  const raw = env.ICODE_LOAD_TIMEOUT_SECONDS;
  if (raw === undefined) return null;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) return null;
  return Math.min(seconds, 60) * 1000;
}
