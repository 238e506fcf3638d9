// Shared by the peer children: the workload shapes, the large value, and the sample loop.
import { warmUp } from "../lib/warmup.mjs";

/** The large value: four ASCII strings of this many characters (15.94 MiB in all), as the engine workload. */
export const VALUE_PART = 4_177_920;

export function bigValue() {
  return { text: "", data: Array.from({ length: 4 }, () => "x".repeat(VALUE_PART)) };
}

export function checkBigValue(value) {
  const lengths = (value?.data ?? []).map((part) => part.length);
  if (lengths.length !== 4 || lengths.some((length) => length !== VALUE_PART)) {
    throw new Error(`large value came back with parts of ${JSON.stringify(lengths)} characters`);
  }
}

export function checkFanout(text, n) {
  if (!text.startsWith("## b") || text.split("\n\n").length !== n) {
    throw new Error(`fan-out joined ${text.split("\n\n").length} results, expected ${n}`);
  }
}

/**
 * Runs `once()` (build the graph and run it) `reps` times after the warm-up, and prints
 * `{ samples_ms, build_ms, run_ms }`. `once` returns `{ buildMs }` so build and execution can be told apart.
 * The warm-up is the engine's (see `warmupNodes` in lib/suites.mjs): up to `warmup.runs` runs of the same
 * shape at `warmup.n` nodes, stopping once `warmup.budget_ms` have passed.
 */
export async function sample(job, once) {
  const warmup = job.warmup ?? { n: Math.min(job.n, 10), runs: 1, budget_ms: 0 };
  await warmUp({ runs: warmup.runs, budgetMs: warmup.budget_ms }, () => once({ ...job, n: warmup.n }));
  const samples = [];
  const build = [];
  for (let rep = 0; rep < job.reps; rep++) {
    const t0 = performance.now();
    const { buildMs } = await once(job);
    samples.push(performance.now() - t0);
    build.push(buildMs);
  }
  const run = samples.map((total, i) => total - build[i]);
  process.stdout.write(`${JSON.stringify({ samples_ms: samples, build_ms: build, run_ms: run })}\n`);
}
