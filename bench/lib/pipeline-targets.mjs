// The pipeline row's target (issue 19): a run of the layered ACP pipeline / the same layers of bare ACP
// clients, the median of per-round ratios measured side by side in one process (lib/rounds.mjs); beside it,
// for information, the run against the arithmetic ideal, and the store's operations per second during the
// run (and per node). Pure: records in, targets out, through the helpers of computeTargets (lib/targets.mjs).
import { count, duration, times } from "./format.mjs";
import { PIPELINE_ID, PIPELINE_IDEAL_ID, PIPELINE_LIMIT } from "./pipeline-rows.mjs";
import { MIN_ROUNDS, median, medianRoundRatio, ratio, target } from "./stats.mjs";

const medianOf = (values) => (values.length > 0 ? median(values) : null);

/** The fewest and the most attempts in flight at once over the rounds ("10", "9–10"), or "–". */
function inFlight(r) {
  const counts = r.rounds.map((x) => x.max_in_flight).filter(Number.isFinite);
  if (counts.length === 0) return "–";
  const [low, high] = [Math.min(...counts), Math.max(...counts)];
  return low === high ? String(high) : `${low}–${high}`;
}

/**
 * The store's figures of each round: calls during the drive per second of the drive, and per node.
 * Rounds without their store calls or drive time are left out.
 */
function storeRates(r) {
  const rounds = (r.rounds ?? []).filter(
    (x) => Number.isFinite(x.store_calls) && Number.isFinite(x.drive_ms) && x.drive_ms > 0,
  );
  return {
    perSecond: rounds.map((x) => (x.store_calls * 1000) / x.drive_ms),
    perNode: rounds.map((x) => x.store_calls / r.nodes),
  };
}

/**
 * Adds the pipeline row's target and information. `helpers` is `{ ok, why, add, inform }` of computeTargets.
 */
export function pipelineTargets({ ok, why, add, inform }) {
  const r = ok(PIPELINE_ID);
  const n = Array.isArray(r?.rounds) ? r.rounds.length : 0;
  const value = r ? medianRoundRatio(r.rounds) : null;
  const floorMs = r ? medianOf(r.rounds.map((x) => x.floor_ms)) : null;
  const note =
    r === null
      ? why(PIPELINE_ID)
      : n < MIN_ROUNDS
        ? `${PIPELINE_ID} has ${n} rounds; its ratio needs at least ${MIN_ROUNDS}`
        : `${count(r.nodes)} nodes in ${r.layers} layers of ${r.width}, at most ${inFlight(r)} attempts in flight, ${n} rounds: the run ${duration(r.median_ms)} (the drive ${duration(medianOf(r.rounds.map((x) => x.drive_ms)))}, stopping the last agents ${duration(medianOf(r.rounds.map((x) => x.stop_ms)))}), the bare layers ${duration(floorMs)}`;
  add(
    PIPELINE_ID,
    target(
      `pipeline of ${r ? count(r.nodes) : 200} ACP nodes in layers of ${r?.width ?? 10} ≤ ${PIPELINE_LIMIT}× the same layers of bare ACP clients, a layer at once`,
      value,
      PIPELINE_LIMIT,
      { note },
    ),
    `${times(value)} the bare layers (median of per-round ratios)`,
  );

  // The arithmetic ideal, per round: layers × (delay + a bare session's start alone).
  const ideal = ok(PIPELINE_IDEAL_ID);
  const perRound =
    r && ideal && r.rounds.length === ideal.samples_ms.length
      ? r.rounds.map((x, i) => ratio(x.subject_ms, ideal.samples_ms[i]))
      : [];
  const idealRatio = perRound.length > 0 && !perRound.includes(null) ? median(perRound) : null;
  inform(
    PIPELINE_IDEAL_ID,
    "pipeline row: the run / the arithmetic ideal (layers × (agent delay + a bare session's start))",
    idealRatio,
    `the run is ${times(idealRatio)} this`,
    idealRatio === null
      ? (why(PIPELINE_ID, PIPELINE_IDEAL_ID) ?? "the rounds of the run and of the ideal do not match")
      : `the ideal ${duration(ideal.median_ms)} (median of the rounds), the run ${duration(r.median_ms)}`,
  );

  // The store during the run: its method calls (a counting proxy) per second of the drive, and per node.
  if (r !== null) {
    const { perSecond, perNode } = storeRates(r);
    if (perSecond.length > 0) {
      const calls = r.rounds.at(-1)?.calls ?? {};
      const top = Object.entries(calls)
        .slice(0, 4)
        .map(([method, c]) => `${method} ${count(c)}`)
        .join(", ");
      const text = `store: ${count(Math.round(median(perSecond)))} operations/s during the run, ${median(perNode).toFixed(1)} per node`;
      inform(
        PIPELINE_ID,
        "pipeline row: store operations per second during the run (not a ratio: calls per second)",
        median(perSecond),
        text,
        `median of ${perSecond.length} rounds; ${median(perNode).toFixed(1)} calls per node; the last round's most called: ${top}`,
      );
    }
  }
}
