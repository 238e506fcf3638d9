// The warm-up every in-process subject gets before its measured runs (the engine-API child and the peer
// children; dask_shapes.py does the same in Python). The sizes come from `warmupNodes` in suites.mjs.

/**
 * Awaits `runOnce()` at least once and at most `runs` times, stopping once `budgetMs` have passed since the
 * first run started.
 */
export async function warmUp({ runs, budgetMs }, runOnce) {
  const started = performance.now();
  for (let run = 0; run < runs && (run === 0 || performance.now() - started < budgetMs); run++) {
    await runOnce();
  }
}
