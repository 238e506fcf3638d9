// Rounds of a subject and its floor, measured side by side in one process: what the agent rows do. The
// machine's speed drifts over seconds on a shared machine, so a row's ratio is not one median against
// another taken minutes apart, but the median of the ratios of rounds, each round timing the subject and
// the floor one right after the other.

/**
 * Times `subject()` and `floor()` once each per round, for `rounds` rounds, alternating which goes first
 * (the subject in rounds 0, 2, 4, …), so that a drift within a round weighs on both sides alike. Each
 * function may return a value (kept as `subject_detail` / `floor_detail`); what it does after its work
 * (checks) belongs in `check`, which is called untimed with `(which, detail)`. Returns one
 * `{ subject_ms, floor_ms, subject_first, subject_detail?, floor_detail? }` per round.
 */
export async function measureRounds({ rounds, subject, floor, check = async () => {} }) {
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const subjectFirst = round % 2 === 0;
    const entry = { subject_ms: 0, floor_ms: 0, subject_first: subjectFirst };
    for (const which of subjectFirst ? ["subject", "floor"] : ["floor", "subject"]) {
      const run = which === "subject" ? subject : floor;
      const t0 = performance.now();
      const detail = await run();
      entry[`${which}_ms`] = performance.now() - t0;
      await check(which, detail);
      if (detail !== undefined) entry[`${which}_detail`] = detail;
    }
    results.push(entry);
  }
  return results;
}
