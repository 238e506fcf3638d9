// Pure statistics of the benchmark: summaries of samples, per-node slopes, ratios and targets.

/** The median of a nonempty list of numbers (the mean of the middle two for an even count). */
export function median(values) {
  if (values.length === 0) throw new RangeError("median of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** `{ median_ms, min_ms, max_ms, runs, samples_ms }` of samples in milliseconds. */
export function summarize(samples) {
  return {
    median_ms: median(samples),
    min_ms: Math.min(...samples),
    max_ms: Math.max(...samples),
    runs: samples.length,
    samples_ms: samples,
  };
}

/**
 * The marginal cost per unit between two sizes: (t(nB) − t(nA)) / (nB − nA). The fixed cost of a run
 * (starting a worker, loading the file) cancels out, leaving what each additional node costs.
 */
export function slope(a, b) {
  if (b.n === a.n) throw new RangeError("slope between two equal sizes");
  return (b.ms - a.ms) / (b.n - a.n);
}

/** `numerator / denominator`, or `null` when either is missing, not finite, or the denominator is not positive. */
export function ratio(numerator, denominator) {
  if (!Number.isFinite(numerator) || !Number.isFinite(denominator) || denominator <= 0) return null;
  return numerator / denominator;
}

/**
 * A target: `ratio ≤ limit` is met. `met` is `null` when the target does not apply on this machine (such as
 * dask not installed), `false` when it applies but could not be measured (`ratio` is then `null`).
 */
export function target(name, ratioValue, limit, { applies = true, note } = {}) {
  const met = !applies ? null : ratioValue === null ? false : ratioValue <= limit;
  const result = { name, ratio: ratioValue, limit, met };
  if (note !== undefined) result.note = note;
  return result;
}

/** A row measured in rounds needs at least this many for its ratio (the median of the rounds' ratios). */
export const MIN_ROUNDS = 5;

/**
 * The median of the per-round ratios `subject_ms / floor_ms` of rounds measured side by side, or `null`
 * with fewer than `MIN_ROUNDS` rounds or a round whose ratio is not defined.
 */
export function medianRoundRatio(rounds) {
  if (!Array.isArray(rounds) || rounds.length < MIN_ROUNDS) return null;
  const ratios = rounds.map((r) => ratio(r.subject_ms, r.floor_ms));
  return ratios.includes(null) ? null : median(ratios);
}

/**
 * The median over rounds of what the subject costs beyond its floor per unit of work,
 * `(subject_ms − floor_ms) / units`, or `null` with fewer than `MIN_ROUNDS` rounds.
 */
export function medianRoundExcess(rounds, units) {
  if (!Array.isArray(rounds) || rounds.length < MIN_ROUNDS || !(units > 0)) return null;
  return median(rounds.map((r) => (r.subject_ms - r.floor_ms) / units));
}
