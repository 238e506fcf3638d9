// The agent rows' targets (issue 18): each the median of per-round ratios of a subject and its floor measured
// side by side in one process (lib/rounds.mjs), over at least MIN_ROUNDS rounds. Pure: records in, targets
// out, through the helpers of computeTargets (lib/targets.mjs).
import {
  ACP_ID,
  ACP_NODE_START_ID,
  ACP_WARM_ID,
  floorId,
  LIMITS,
  NATIVE_VARIANTS,
  nativeId,
  PARALLEL_ID,
} from "./agent-rows.mjs";
import { count, duration, times } from "./format.mjs";
import { MIN_ROUNDS, median, medianRoundExcess, medianRoundRatio, ratio, target } from "./stats.mjs";

/** Why a rounds record gives no ratio (too few rounds), or undefined. */
function roundsProblem(r) {
  const n = Array.isArray(r.rounds) ? r.rounds.length : 0;
  return n >= MIN_ROUNDS ? undefined : `${r.id} has ${n} rounds; its ratio needs at least ${MIN_ROUNDS}`;
}

const medianOf = (values) => (Array.isArray(values) && values.length > 0 ? median(values) : null);

/**
 * Adds the agent rows' targets and information. `helpers` is `{ ok, why, add, inform }` of
 * computeTargets: `ok(id)` is the record when measured, `why(...ids)` says what was not, `add(id, t, text)`
 * and `inform(id, name, ratio, text, note)` record a target or an information on a row.
 */
export function agentTargets({ ok, why, add, inform }) {
  // Chains of native agent nodes against a bare AI SDK loop making the same requests.
  for (const v of NATIVE_VARIANTS) {
    const id = nativeId(v);
    const r = ok(id);
    const value = r ? medianRoundRatio(r.rounds) : null;
    const excess = r ? medianRoundExcess(r.rounds, r.nodes) : null;
    const note =
      r === null
        ? why(id)
        : (roundsProblem(r) ??
          `${count(r.nodes)} nodes, ${r.rounds.length} rounds: engine ${duration(r.median_ms)} (first node started after ${duration(medianOf(r.to_first_node_ms))}), bare loop ${duration(medianOf(r.rounds.map((x) => x.floor_ms)))}; ${duration(excess)} more per node`);
    add(
      id,
      target(
        `native agent chain (${v.name}, ${v.call}) ≤ ${LIMITS.native}× a bare AI SDK ${v.call} loop`,
        value,
        LIMITS.native,
        { note },
      ),
      `${times(value)} the bare loop (median of per-round ratios), ${excess === null ? "–" : `+${duration(excess)}`}/node`,
    );
  }

  // Native agent nodes in parallel: throughput at the same concurrency, as a time ratio.
  {
    const r = ok(PARALLEL_ID);
    const timeLimit = Number((1 / LIMITS.parallelThroughput).toPrecision(3));
    let value = r ? medianRoundRatio(r.rounds) : null;
    let note = r === null ? why(PARALLEL_ID) : roundsProblem(r);
    if (r !== null && note === undefined) {
      const reached = r.max_in_flight?.subject ?? 0;
      if (reached < r.concurrency) {
        note = `the engine had at most ${reached} agent attempts in flight, expected ${r.concurrency}: the limit was not raised`;
        value = null;
      } else {
        note = `${count(r.nodes)} nodes, ${r.concurrency} at a time (maxConcurrentAgents; ${reached} reached, bare loop ${r.max_in_flight?.floor ?? "–"}), ${r.rounds.length} rounds: engine ${duration(r.median_ms)}, bare loop ${duration(medianOf(r.rounds.map((x) => x.floor_ms)))}`;
      }
    }
    add(
      PARALLEL_ID,
      target(
        `native agent nodes ${r?.concurrency ?? 50} at a time: throughput ≥ ${LIMITS.parallelThroughput}× a bare loop at the same concurrency (time ≤ ${timeLimit}×)`,
        value,
        timeLimit,
        { note },
      ),
      `throughput ${times(value === null ? null : 1 / value)} the bare loop's (time ${times(value)})`,
    );
  }

  // An ACP node against a bare ACP SDK client: as a ratio, and in milliseconds more per node.
  {
    const r = ok(ACP_ID);
    const value = r ? medianRoundRatio(r.rounds) : null;
    const excess = r ? medianRoundExcess(r.rounds, r.nodes) : null;
    const perSession = r ? medianOf(r.rounds.map((x) => x.floor_ms / r.nodes)) : null;
    // The run's own setup and finish (worker start, loading the workflow, records), outside the nodes' span.
    const outside = r
      ? medianOf(r.rounds.filter((x) => typeof x.run_ms === "number").map((x) => x.run_ms - x.subject_ms))
      : null;
    const note =
      r === null
        ? why(ACP_ID)
        : (roundsProblem(r) ??
          `${count(r.nodes)} nodes, ${r.rounds.length} rounds: engine ${duration(r.median_ms / r.nodes)} per node from the first node's start to the last one's end, bare client ${duration(perSession)} per session; the run's setup and finish outside that span: ${duration(outside)} a run`);
    add(
      ACP_ID,
      target(
        `ACP node spawned per node ≤ ${LIMITS.acp}× a bare ACP SDK client (spawn, initialize, session/new, one prompt, exit)`,
        value,
        LIMITS.acp,
        { note },
      ),
      `${times(value)} the bare client (median of per-round ratios)`,
    );
    add(
      ACP_ID,
      target(
        `ACP node spawned per node: at most ${LIMITS.acpExtraMs} ms more than the bare client (ms per node)`,
        excess,
        LIMITS.acpExtraMs,
        { note },
      ),
      `${excess === null ? "–" : `${excess >= 0 ? "+" : ""}${duration(excess)}`}/node over the bare client`,
    );
    // The interpreter's start, apart: how much of a bare session is starting Node.
    const start = ok(ACP_NODE_START_ID);
    const share = start && perSession !== null ? ratio(start.median_ms, perSession) : null;
    inform(
      ACP_NODE_START_ID,
      "ACP: interpreter start (node -e 0) / a bare client session",
      share,
      `${times(share)} of a bare client session (${duration(perSession)})`,
      share === null
        ? why(ACP_NODE_START_ID, ACP_ID)
        : `node -e 0 ${duration(start.median_ms)} (median of the rounds), a bare session ${duration(perSession)}`,
    );
  }

  // A second turn on a reused ACP session: the floor is measured, the subject does not exist yet.
  {
    const floor = ok(floorId(ACP_WARM_ID));
    add(
      ACP_WARM_ID,
      target(
        `second turn on a reused ACP session ≤ ${LIMITS.warmTurn}× the bare client's warm turn`,
        null,
        LIMITS.warmTurn,
        {
          applies: false,
          note: `n/a (no session reuse yet): workflow agent nodes start a new agent and session per attempt; reused sessions come with JSON pipelines' reuse_session_of. The floor, the bare client's warm turn: ${floor ? duration(floor.median_ms) : (why(floorId(ACP_WARM_ID)) ?? "–")}`,
        },
      ),
      "",
      "n/a (no session reuse yet)",
    );
  }
}
