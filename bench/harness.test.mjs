// Unit tests of the benchmark harness (node:test; no timing is asserted): statistics, targets (the agent
// rows' too), the table, the run-result check, that the generated workflows build with the shipped Python
// SDK, and that the peer engines stay outside the workspace (these tests pass without them installed).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { LIMITS, NATIVE_VARIANTS } from "./lib/agent-rows.mjs";
import { acpChainSource, agentChainSource, agentFanoutSource } from "./lib/agent-workflows.mjs";
import { checkRunResult } from "./lib/check.mjs";
import { duration, renderTable, times } from "./lib/format.mjs";
import { ensurePeers, installCommand, PEERS_DIR, peerState } from "./lib/peers.mjs";
import { countingStore, layeredPipeline, sessionPerNode } from "./lib/pipeline-glue.mjs";
import { PIPELINE_FLOOR_ID, PIPELINE_ID, PIPELINE_IDEAL_ID, PIPELINE_LIMIT } from "./lib/pipeline-rows.mjs";
import { lastJsonLine } from "./lib/procs.mjs";
import { buildTable, targetSummary } from "./lib/report.mjs";
import { measureRounds } from "./lib/rounds.mjs";
import {
  MIN_ROUNDS,
  median,
  medianRoundExcess,
  medianRoundRatio,
  ratio,
  slope,
  summarize,
  target,
} from "./lib/stats.mjs";
import { computeTargets } from "./lib/targets.mjs";
import { chainSource, fanoutSource, loopSource, valueSource, writeManyProject } from "./lib/workflows.mjs";

const REPO_ROOT = new URL("..", import.meta.url).pathname;

describe("statistics", () => {
  test("median of odd and even counts, unsorted input left alone", () => {
    const input = [5, 1, 3];
    assert.equal(median(input), 3);
    assert.deepEqual(input, [5, 1, 3]);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.throws(() => median([]), RangeError);
  });

  test("summarize gives median, min, max and runs", () => {
    assert.deepEqual(summarize([3, 1, 2]), {
      median_ms: 2,
      min_ms: 1,
      max_ms: 3,
      runs: 3,
      samples_ms: [3, 1, 2],
    });
  });

  test("slope removes the fixed cost of a run", () => {
    // 150 ms fixed + 0.07 ms per node.
    const t = (n) => 150 + 0.07 * n;
    assert.ok(Math.abs(slope({ n: 1000, ms: t(1000) }, { n: 10000, ms: t(10000) }) - 0.07) < 1e-12);
    assert.throws(() => slope({ n: 5, ms: 1 }, { n: 5, ms: 2 }), RangeError);
  });

  test("ratio is null for missing or non-positive denominators", () => {
    assert.equal(ratio(3, 2), 1.5);
    assert.equal(ratio(null, 2), null);
    assert.equal(ratio(1, 0), null);
    assert.equal(ratio(1, Number.NaN), null);
  });

  test("a target is met at its limit, not met above it or unmeasured, and n/a when it does not apply", () => {
    assert.equal(target("t", 1.5, 1.5).met, true);
    assert.equal(target("t", 1.51, 1.5).met, false);
    assert.equal(target("t", null, 1.5).met, false);
    assert.equal(target("t", null, 1, { applies: false }).met, null);
    assert.deepEqual(Object.keys(target("t", 1, 2)), ["name", "ratio", "limit", "met"]);
  });
});

/** Records of a run where every figure is chosen so that each target's ratio is known exactly. */
function syntheticRecords({ dask = true } = {}) {
  const ok = (id, median_ms, extra = {}) => ({ id, status: "ok", median_ms, ...extra });
  const records = [
    ok("floor/node-start", 40),
    ok("floor/python-start", 20),
    ok("floor/roundtrip-serial", 0.05),
    ok("floor/roundtrip-pipelined", 0.02),
    ok("floor/json-16mib", 100, { bytes: 16 * 2 ** 20 }),
    ok("api/chain/100", 200 - 900 * 0.06),
    ok("api/chain/1000", 200),
    ok("api/chain/10000", 200 + 9000 * 0.06), // 60 µs per node: 1.2× serial
    ok("api/fanout/100", 100 - 900 * 0.05),
    ok("api/fanout/1000", 100),
    ok("api/fanout/10000", 100 + 9000 * 0.05), // 50 µs per node: 2.5× pipelined
    ok("api/loop/1000", 100),
    ok("api/loop/10000", 1300), // 13× growth
    // Peers: per node is (t(1,000) − t(100)) / 900 on both sides.
    ok("langgraph/chain/100", 10),
    ok("langgraph/chain/1000", 10 + 900 * 0.06 * 12), // 12× faster per node: met at 10×, not at 20×
    ok("langgraph/fanout/100", 10),
    { id: "langgraph/fanout/1000", status: "dnf", bound_s: 120 },
    ok("mastra/chain/100", 10),
    ok("mastra/chain/1000", 10 + 900 * 0.06 * 4), // only 4× faster
    ok("mastra/fanout/100", 10),
    { id: "mastra/fanout/1000", status: "error", note: "boom" },
    ok("cli/validate/echo", 72), // 1.2 × 60
    ok("cli/run/echo", 84), // 1.4 × 60
    ok("cli/list/many", 80), // 2 × 40
    ok("api/value/small", 50),
    ok("api/value/big", 50 + 150), // 1.5 × floor (size-scaled)
    ok("api/soak", 10, {
      memory: {
        mark: { runs: 10, total_kib: 100_000, heap_used_kib: 12_000 },
        end: { runs: 1000, total_kib: 125_000, heap_used_kib: 12_600 }, // heap 1.05×, RSS 1.25×
      },
    }),
  ];
  if (dask) {
    records.push(
      ok("dask/chain/100", 5),
      ok("dask/chain/1000", 5 + 900 * 0.075), // the engine's 60 µs is 0.8× its 75 µs
      ok("dask/fanout/100", 5),
      ok("dask/fanout/1000", 5 + 900 * 0.025), // the engine's 50 µs is 2× its 25 µs
    );
  }
  return records;
}

describe("targets", () => {
  const options = {
    apiSizes: [100, 1000, 10000],
    valueBytes: 16 * 2 ** 20,
    daskInstalled: true,
    soakRuns: 1000,
    soakMark: 10,
  };

  test("every target of the issue is computed once, each as ratio ≤ limit", () => {
    const { targets, information } = computeTargets(syntheticRecords(), options);
    assert.equal(targets.length, 22);
    assert.equal(new Set(targets.map((t) => t.name)).size, 22);
    for (const t of targets)
      assert.ok(
        ["name", "ratio", "limit", "met"].every((key) => key in t),
        t.name,
      );
    // Shown, never counted: the chain against the serial round trip, dask, resident memory.
    assert.deepEqual(
      information.map((i) => i.name),
      [
        "Chain: per trivial Python node / the serial raw round trip",
        "chain of 1,000: engine / dask's threaded scheduler per node",
        "fan-out of 1,000: engine / dask's threaded scheduler per node",
        "engine RSS after 1,000 runs / after 10",
        "ACP: interpreter start (node -e 0) / a bare client session",
        "pipeline row: the run / the arithmetic ideal (layers × (agent delay + a bare session's start))",
      ],
    );
    for (const i of information) assert.ok(!("limit" in i) && !("met" in i), i.name);
    for (const t of targets) assert.doesNotMatch(t.name, /dask|RSS|serial/, t.name);
  });

  test("ratios and verdicts follow the definitions", () => {
    const { targets, information } = computeTargets(syntheticRecords(), options);
    const find = (part, list = targets) => {
      const found = list.filter((t) => t.name.includes(part));
      assert.equal(found.length, 1, part);
      return found[0];
    };
    const close = (t, expected, met) => {
      assert.ok(Math.abs(t.ratio - expected) < 1e-9, `${t.name}: ${t.ratio} ≠ ${expected}`);
      assert.equal(t.met, met, t.name);
    };
    close(find("Fan-out: per trivial"), 2.5, false);
    assert.equal(find("Fan-out: per trivial").limit, 2);
    close(find("Chain: time"), 3.7, true);
    close(find("Loop: time"), 13, false);
    const langgraphChain = find("chain of 1,000: ≥ 10× faster per node than LangGraph");
    close(langgraphChain, 1 / 12, true);
    assert.equal(langgraphChain.limit, 0.1);
    close(
      find("fan-out of 1,000: ≥ 10× faster per node than LangGraph"),
      0.05 / ((120_000 - 10) / 900),
      true,
    );
    assert.match(find("fan-out of 1,000: ≥ 10× faster per node than LangGraph").note, /lower bound/);
    close(find("chain of 1,000: ≥ 5× faster per node than Mastra"), 1 / 4, false);
    assert.equal(find("chain of 1,000: ≥ 5× faster per node than Mastra").limit, 0.2);
    const broken = find("fan-out of 1,000: ≥ 5× faster per node than Mastra");
    assert.equal(broken.ratio, null);
    assert.equal(broken.met, false);
    assert.match(broken.note, /mastra\/fanout\/1000 error \(boom\)/);
    close(find("validate cold"), 1.2, true);
    close(find("run examples/echo.py cold"), 1.4, false);
    assert.equal(find("run examples/echo.py cold").limit, 1.3);
    close(find("list over 1,000"), 2, false);
    close(find("16 MiB value"), 1.5, true);
    const heap = find("engine heap in use after a full GC");
    close(heap, 1.05, true);
    assert.match(heap.note, /11\.7 MiB after 10 runs, 12\.3 MiB after 1000/);
    const info = (part) => find(part, information).ratio;
    assert.ok(Math.abs(info("Chain: per trivial") - 1.2) < 1e-9);
    assert.ok(Math.abs(info("chain of 1,000: engine / dask") - 0.8) < 1e-9);
    assert.ok(Math.abs(info("fan-out of 1,000: engine / dask") - 2) < 1e-9);
    assert.ok(Math.abs(info("engine RSS") - 1.25) < 1e-9);
  });

  test("the memory target reads the heap after a full GC, not resident memory", () => {
    const withMemory = (memory) =>
      syntheticRecords().map((r) => (r.id === "api/soak" ? { ...r, memory } : r));
    const heapTarget = (records) =>
      computeTargets(records, options).targets.find((t) => t.name.startsWith("engine heap"));
    // Resident memory flat, heap grown by 12.5%: not met.
    const grown = heapTarget(
      withMemory({
        mark: { runs: 10, total_kib: 100_000, heap_used_kib: 12_000 },
        end: { runs: 1000, total_kib: 100_000, heap_used_kib: 13_500 },
      }),
    );
    assert.ok(Math.abs(grown.ratio - 1.125) < 1e-9);
    assert.equal(grown.met, false);
    // A soak record without heap figures (an older child) is not measured, whatever its RSS says.
    const missing = heapTarget(
      withMemory({ mark: { runs: 10, total_kib: 100_000 }, end: { runs: 1000, total_kib: 100_000 } }),
    );
    assert.equal(missing.ratio, null);
    assert.equal(missing.met, false);
    assert.match(missing.note, /no heap_used_kib/);
  });

  test("cold commands are compared with the floors measured alongside them, when they were", () => {
    const records = syntheticRecords().map((r) =>
      r.id === "cli/validate/echo"
        ? { ...r, alongside: { node_start_ms: 50, python_start_ms: 30 } } // 72 / 80
        : r.id === "cli/list/many"
          ? { ...r, alongside: { node_start_ms: 64, python_start_ms: 30 } } // 80 / 64
          : r.id === "cli/run/echo"
            ? { ...r, alongside: { node_start_ms: 50, python_start_ms: 20 } } // 84 / 70
            : r,
    );
    const { targets, annotations } = computeTargets(records, options);
    const ratioOf = (part) => targets.find((t) => t.name.includes(part)).ratio;
    assert.ok(Math.abs(ratioOf("validate cold") - 0.9) < 1e-9);
    assert.ok(Math.abs(ratioOf("run examples/echo.py cold") - 1.2) < 1e-9);
    assert.ok(Math.abs(ratioOf("list over 1,000") - 1.25) < 1e-9);
    assert.ok(annotations.some((a) => a.id === "cli/validate/echo" && /measured alongside/.test(a.text)));
    assert.ok(annotations.some((a) => a.id === "cli/run/echo" && /measured alongside/.test(a.text)));
  });

  test("the large-value floor is scaled to the size of the value actually moved", () => {
    const { targets } = computeTargets(syntheticRecords(), { ...options, valueBytes: 8 * 2 ** 20 });
    const t = targets.find((x) => x.name.startsWith("16 MiB"));
    assert.ok(Math.abs(t.ratio - 3) < 1e-9); // 150 ms added / (100 ms × 0.5)
    assert.equal(t.met, true);
  });

  test("without dask nothing is shown for it; without engine runs every target is not met", () => {
    const { targets, information } = computeTargets(syntheticRecords({ dask: false }), {
      ...options,
      daskInstalled: false,
    });
    assert.equal(targets.length, 22);
    assert.equal(information.filter((i) => i.name.includes("dask")).length, 0);
    const empty = computeTargets([], { ...options, daskInstalled: false });
    assert.equal(empty.targets.length, 22);
    // Every target is not met, except the reused ACP session's, which does not apply yet.
    const [na, ...others] = [...empty.targets].sort(
      (a, b) => Number(b.met === null) - Number(a.met === null),
    );
    assert.match(na.name, /reused ACP session/);
    assert.equal(na.met, null);
    for (const t of others) assert.ok(t.met === false && t.ratio === null, t.name);
    for (const i of empty.information) assert.equal(i.ratio, null, i.name);
    assert.ok(empty.annotations.every((a) => !/information/.test(a.text)));
    assert.equal(
      targetSummary(empty.targets),
      "Targets met: 0 of 21 (1 not applicable). Not met (✗ in the table): 21.",
    );
  });
});

/** Rounds of `[subject_ms, floor_ms]` pairs, the subject first in even rounds (as measureRounds does). */
const roundsOf = (pairs, extra = () => ({})) =>
  pairs.map(([subject_ms, floor_ms], i) => ({
    subject_ms,
    floor_ms,
    subject_first: i % 2 === 0,
    ...extra(i),
  }));

/** Agent records whose per-round ratios are chosen so that each agent target's value is known exactly. */
function agentRecords({ parallelReached = 50 } = {}) {
  const row = (id, rounds, extra = {}) => ({
    id,
    group: "agents",
    status: "ok",
    rounds,
    ...summarize(rounds.map((r) => r.subject_ms)),
    ...extra,
  });
  return [
    // Ratios 1.1, 1.05, 1.2, 1.08, 1.0: median 1.08 (met); per node +0.3, +0.15, +0.6, +0.24, 0 ms: +0.24 ms.
    row(
      "agents/native/openai-generate",
      roundsOf([
        [3300, 3000],
        [3150, 3000],
        [3600, 3000],
        [3240, 3000],
        [3000, 3000],
      ]),
      { nodes: 1000, to_first_node_ms: [100, 120, 110, 90, 130] },
    ),
    // 1.3 in every round: not met.
    row("agents/native/openai-stream", roundsOf(Array.from({ length: 5 }, () => [1300, 1000])), {
      nodes: 1000,
    }),
    // Four rounds only: no ratio.
    row("agents/native/anthropic-generate", roundsOf(Array.from({ length: 4 }, () => [1000, 1000])), {
      nodes: 1000,
    }),
    // agents/native/anthropic-stream: not measured at all.
    // Time ratios 1.1, 1.05, 1.12, 1.2, 1.0: median 1.1 ≤ 1.11 (throughput 0.91×).
    row(
      "agents/parallel",
      roundsOf([
        [1100, 1000],
        [1050, 1000],
        [1120, 1000],
        [1200, 1000],
        [1000, 1000],
      ]),
      { nodes: 1000, concurrency: 50, max_in_flight: { subject: parallelReached, floor: 50 } },
    ),
    // 20 nodes: ratios 1.017, 1.033, 1.05, 1.008, 1.083 (median 1.033, met); per node +5, +10, +15, +2.5,
    // +25 ms: +10 ms (not met); each run 150 ms longer than its nodes' span.
    row(
      "agents/acp/spawn",
      roundsOf(
        [
          [6100, 6000],
          [6200, 6000],
          [6300, 6000],
          [6050, 6000],
          [6500, 6000],
        ],
        (i) => ({ run_ms: [6100, 6200, 6300, 6050, 6500][i] + 150 }),
      ),
      { nodes: 20 },
    ),
    { id: "agents/acp/node-start", group: "agents", status: "ok", median_ms: 60 }, // 0.2 of a 300 ms session
    { id: "agents/acp/warm-turn", group: "agents", status: "skipped" },
    { id: "agents/acp/warm-turn/floor", group: "agents", status: "ok", median_ms: 1.2 },
  ];
}

describe("agent rows", () => {
  const options = {
    apiSizes: [100, 1000, 10000],
    valueBytes: 16 * 2 ** 20,
    daskInstalled: false,
    soakRuns: 1000,
    soakMark: 10,
  };
  const agentResults = (records) => {
    const { targets, information, annotations } = computeTargets(records, options);
    const find = (part, list = targets) => {
      const found = list.filter((t) => t.name.includes(part));
      assert.equal(found.length, 1, part);
      return found[0];
    };
    return { targets, information, annotations, find };
  };
  const close = (actual, expected, what) =>
    assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

  test("a row's ratio is the median of its per-round ratios, over at least 5 rounds", () => {
    const five = roundsOf([
      [2, 1],
      [3, 1],
      [1, 1],
      [10, 1],
      [4, 2],
    ]);
    assert.equal(MIN_ROUNDS, 5);
    assert.equal(medianRoundRatio(five), 2); // ratios 2, 3, 1, 10, 2
    // Not the ratio of the medians (3 / 1), nor of the sums (20 / 6).
    assert.notEqual(medianRoundRatio(five), median([2, 3, 1, 10, 4]) / median([1, 1, 1, 1, 2]));
    assert.equal(medianRoundRatio(five.slice(0, 4)), null);
    assert.equal(medianRoundRatio(undefined), null);
    assert.equal(medianRoundRatio([...five.slice(0, 4), { subject_ms: 1, floor_ms: 0 }]), null);
    // (subject − floor) per unit: 1, 2, 0, 9, 2 over 1 unit; halved over 2.
    assert.equal(medianRoundExcess(five, 1), 2);
    assert.equal(medianRoundExcess(five, 2), 1);
    assert.equal(medianRoundExcess(five.slice(1), 1), null);
    assert.equal(medianRoundExcess(five, 0), null);
  });

  test("measureRounds alternates which side goes first and checks each side untimed", async () => {
    const log = [];
    const rounds = await measureRounds({
      rounds: 4,
      subject: async () => {
        log.push("subject");
        return { n: log.length };
      },
      floor: async () => {
        log.push("floor");
      },
      check: async (which, detail) => {
        log.push(`check ${which}${detail ? ` ${detail.n}` : ""}`);
      },
    });
    assert.deepEqual(log, [
      "subject",
      "check subject 1",
      "floor",
      "check floor",
      "floor",
      "check floor",
      "subject",
      "check subject 7",
      "subject",
      "check subject 9",
      "floor",
      "check floor",
      "floor",
      "check floor",
      "subject",
      "check subject 15",
    ]);
    assert.deepEqual(
      rounds.map((r) => r.subject_first),
      [true, false, true, false],
    );
    assert.deepEqual(rounds[1].subject_detail, { n: 7 });
    assert.equal("floor_detail" in rounds[0], false);
    for (const r of rounds) assert.ok(r.subject_ms >= 0 && r.floor_ms >= 0);
    // A failed check ends the measurement.
    await assert.rejects(
      measureRounds({
        rounds: 5,
        subject: async () => {},
        floor: async () => {},
        check: async (which) => {
          if (which === "floor") throw new Error("made 3 requests, expected 2");
        },
      }),
      /made 3 requests/,
    );
  });

  test("native chains: ratio against the bare loop, per-node excess, too few rounds, not measured", () => {
    const { find, annotations } = agentResults(agentRecords());
    assert.equal(NATIVE_VARIANTS.length, 4);
    const plain = find("native agent chain (OpenAI-compatible, generateText)");
    close(plain.ratio, 1.08, plain.name);
    assert.equal(plain.limit, LIMITS.native);
    assert.equal(plain.met, true);
    assert.match(
      plain.note,
      /1,000 nodes, 5 rounds: .*first node started after 110 ms.*240 µs more per node/,
    );
    assert.ok(
      annotations.some(
        (a) =>
          a.id === "agents/native/openai-generate" &&
          /1\.08× the bare loop .*\+240 µs\/node .*✓ met/.test(a.text),
      ),
    );
    const stream = find("native agent chain (OpenAI-compatible, streamText)");
    close(stream.ratio, 1.3, stream.name);
    assert.equal(stream.met, false);
    const few = find("native agent chain (Anthropic, generateText)");
    assert.equal(few.ratio, null);
    assert.equal(few.met, false);
    assert.match(few.note, /has 4 rounds; its ratio needs at least 5/);
    const missing = find("native agent chain (Anthropic, streamText)");
    assert.equal(missing.met, false);
    assert.match(missing.note, /not measured: agents\/native\/anthropic-stream missing/);
  });

  test("parallel nodes: throughput as a time ratio, only when the engine reached the raised limit", () => {
    const t = agentResults(agentRecords()).find("at a time: throughput");
    close(t.ratio, 1.1, t.name);
    assert.equal(t.limit, 1.11); // 1 / 0.9, to three digits
    assert.equal(t.met, true);
    assert.match(t.name, /50 at a time: throughput ≥ 0\.9× a bare loop at the same concurrency/);
    assert.match(t.note, /50 at a time \(maxConcurrentAgents; 50 reached, bare loop 50\)/);
    const capped = agentResults(agentRecords({ parallelReached: 4 })).find("at a time: throughput");
    assert.equal(capped.ratio, null);
    assert.equal(capped.met, false);
    assert.match(capped.note, /at most 4 agent attempts in flight, expected 50/);
  });

  test("ACP nodes: ratio and milliseconds more per node; interpreter start apart; the warm turn n/a", () => {
    const { find, information, annotations } = agentResults(agentRecords());
    const acp = find("ACP node spawned per node ≤");
    close(acp.ratio, 1 + 200 / 6000, acp.name);
    assert.equal(acp.limit, 1.05);
    assert.equal(acp.met, true);
    assert.match(
      acp.note,
      /bare client 300 ms per session; the run's setup and finish outside that span: 150 ms/,
    );
    const extra = find("at most 5 ms more");
    close(extra.ratio, 10, extra.name);
    assert.equal(extra.met, false);
    close(find("interpreter start", information).ratio, 0.2, "interpreter start share");
    const warm = find("reused ACP session");
    assert.deepEqual([warm.ratio, warm.met, warm.limit], [null, null, 1.5]);
    assert.match(warm.note, /^n\/a \(no session reuse yet\).*reuse_session_of.*warm turn: 1\.20 ms/);
    assert.ok(
      annotations.some((a) => a.id === "agents/acp/warm-turn" && a.text === "n/a (no session reuse yet)"),
    );
  });

  test("the table shows each agent row against its floor, per round", () => {
    const records = agentRecords().map((r) => ({ label: r.id, min_ms: 1, max_ms: 2, runs: 5, ...r }));
    records.push({
      id: "agents/native/openai-generate/floor",
      group: "agents",
      label: "bare loop",
      status: "ok",
      median_ms: 3000,
      min_ms: 3000,
      max_ms: 3000,
      runs: 5,
      nodes: 1000,
      floor_of: "agents/native/openai-generate",
    });
    const lines = buildTable(records, { annotations: [] }).split("\n");
    assert.match(lines.find((l) => l.startsWith("| **Agent nodes")) ?? "", /Agent nodes/);
    assert.match(
      lines.find((l) => l.includes("| agents/native/openai-generate ")),
      /1\.08× bare, per round/,
    );
    assert.doesNotMatch(
      lines.find((l) => l.includes("| bare loop")),
      /bare, per round/,
    );
    assert.match(
      lines.find((l) => l.includes("| bare loop")),
      /\| 3\.00 ms +\|/,
    ); // per request
  });
});

/** The pipeline row's records, with per-round figures chosen so that its target and information are known. */
function pipelineRecords({ rounds = 5 } = {}) {
  // Ratios 1.05, 1.2, 1.0, 1.08, 1.15: median 1.08 (met at 1.1).
  const pairs = [
    [21_000, 20_000],
    [24_000, 20_000],
    [20_000, 20_000],
    [21_600, 20_000],
    [23_000, 20_000],
  ].slice(0, rounds);
  // Store calls over a 20 s drive: 100, 110, 90, 120, 105 calls per second, 10.5 per node (the median).
  const calls = [2000, 2200, 1800, 2400, 2100];
  const roundsList = roundsOf(pairs, (i) => ({
    drive_ms: 20_000,
    stop_ms: 30,
    store_calls: calls[i],
    calls: { takeCommands: 2000, updateRun: 1500, listEvents: 500 },
    session_start_ms: 300,
    max_in_flight: 10,
  }));
  return [
    {
      id: PIPELINE_ID,
      group: "pipelines",
      label: "pipeline",
      status: "ok",
      nodes: 200,
      layers: 20,
      width: 10,
      rounds: roundsList,
      ...summarize(roundsList.map((r) => r.subject_ms)),
    },
    {
      id: PIPELINE_FLOOR_ID,
      group: "pipelines",
      label: "bare layers",
      status: "ok",
      nodes: 200,
      floor_of: PIPELINE_ID,
      ...summarize(roundsList.map((r) => r.floor_ms)),
    },
    // 20 × (50 + 300) ms = 7 s a round: the run is 3×, 3.43×, 2.86×, 3.09×, 3.29× it (median 3.09×).
    {
      id: PIPELINE_IDEAL_ID,
      group: "pipelines",
      label: "ideal",
      status: "ok",
      nodes: 200,
      ...summarize(roundsList.map(() => 7000)),
    },
  ];
}

describe("pipeline row", () => {
  const options = {
    apiSizes: [100, 1000, 10000],
    valueBytes: 16 * 2 ** 20,
    daskInstalled: false,
    soakRuns: 1000,
    soakMark: 10,
  };
  const pick = (list, part) => {
    const found = list.filter((t) => t.name.startsWith(part));
    assert.equal(found.length, 1, part);
    return found[0];
  };
  const close = (actual, expected, what) =>
    assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

  test("the target is the median of per-round ratios against the bare layers; store calls and the ideal beside it", () => {
    const { targets, information, annotations } = computeTargets(pipelineRecords(), options);
    const t = pick(targets, "pipeline of 200 ACP nodes in layers of 10");
    close(t.ratio, 1.08, t.name);
    assert.equal(t.limit, PIPELINE_LIMIT);
    assert.equal(t.limit, 1.1);
    assert.equal(t.met, true);
    assert.match(
      t.note,
      /^200 nodes in 20 layers of 10, at most 10 attempts in flight, 5 rounds: the run 21\.6 s \(the drive 20\.0 s, stopping the last agents 30\.0 ms\), the bare layers 20\.0 s$/,
    );
    const store = pick(information, "pipeline row: store operations per second");
    close(store.ratio, 105, store.name);
    assert.match(
      store.note,
      /10\.5 calls per node; the last round's most called: takeCommands 2,000, updateRun 1,500/,
    );
    const ideal = pick(information, "pipeline row: the run / the arithmetic ideal");
    close(ideal.ratio, 21_600 / 7000, ideal.name);
    assert.ok(
      annotations.some(
        (a) => a.id === PIPELINE_ID && /^1\.08× the bare layers .*\(limit 1\.1\) ✓ met$/.test(a.text),
      ),
    );
    assert.ok(
      annotations.some(
        (a) =>
          a.id === PIPELINE_ID &&
          a.text === "store: 105 operations/s during the run, 10.5 per node (information)",
      ),
    );
    assert.ok(annotations.some((a) => a.id === PIPELINE_IDEAL_ID && /3\.09× this/.test(a.text)));
  });

  test("too few rounds give no ratio; a row not measured says why; a slow run is not met", () => {
    const few = pick(computeTargets(pipelineRecords({ rounds: 4 }), options).targets, "pipeline of");
    assert.deepEqual([few.ratio, few.met], [null, false]);
    assert.match(few.note, /has 4 rounds; its ratio needs at least 5/);
    const missing = computeTargets([], options);
    const none = pick(missing.targets, "pipeline of");
    assert.deepEqual([none.ratio, none.met], [null, false]);
    assert.match(none.note, /not measured: pipelines\/acp-layers missing/);
    assert.equal(missing.information.filter((i) => i.name.includes("store operations")).length, 0);
    const slow = pipelineRecords();
    for (const r of slow[0].rounds) r.subject_ms = r.floor_ms * 1.2;
    slow[0].rounds[2].max_in_flight = 9;
    const missed = pick(computeTargets(slow, options).targets, "pipeline of");
    close(missed.ratio, 1.2, missed.name);
    assert.equal(missed.met, false);
    assert.match(missed.note, /at most 9–10 attempts in flight/);
  });

  test("the table has a pipelines section; the run shows its ratio per round, its floor does not", () => {
    const records = pipelineRecords().map((r) => ({ ...r, label: r.id }));
    const lines = buildTable(records, { annotations: [] }).split("\n");
    assert.match(lines.find((l) => l.startsWith("| **JSON pipelines")) ?? "", /bare ACP clients/);
    assert.match(lines.find((l) => l.startsWith(`| ${PIPELINE_ID} `)) ?? "", /1\.08× bare, per round/);
    assert.doesNotMatch(lines.find((l) => l.startsWith(`| ${PIPELINE_FLOOR_ID} `)) ?? "", /per round/);
  });

  test("the layered pipeline is 20 layers of 10, each node after all of the layer before, and runs in a real store", async () => {
    const { openSqlitePipelineStore, PipelineDefinitionSchema } = await import("@icode/pipelines");
    const definition = layeredPipeline({ layers: 20, width: 10, profile: "P" });
    const parsed = PipelineDefinitionSchema.parse(definition);
    assert.equal(parsed.nodes.length, 200);
    assert.deepEqual(parsed.nodes[0].depends_on, []);
    assert.deepEqual(parsed.nodes[9].depends_on, []);
    assert.deepEqual(
      parsed.nodes[10].depends_on,
      Array.from({ length: 10 }, (_, k) => `l0n${k}`),
    );
    assert.deepEqual(
      parsed.nodes[199].depends_on,
      Array.from({ length: 10 }, (_, k) => `l18n${k}`),
    );
    assert.ok(parsed.nodes.every((n) => n.profile_id === "P" && n.reuse_session_of === null));

    const dir = mkdtempSync(join(tmpdir(), "bench-pipeline-"));
    const sqlite = openSqlitePipelineStore({ chrysHome: dir });
    try {
      const counts = new Map();
      const counting = { on: false };
      const store = countingStore(sqlite, counts, counting);
      const draft = await store.createDefinition(definition);
      await store.publishDefinition(draft.id);
      assert.equal(counts.size, 0); // not counting yet
      counting.on = true;
      const run = await store.createRun({ definition_id: draft.id, task_input: "t" });
      const nodes = await store.getRunNodes(run.run_id);
      await store.getRunNodes(run.run_id);
      counting.on = false;
      await store.getRun(run.run_id);
      assert.equal(nodes.length, 200);
      assert.ok(nodes.every((n) => n.state === "pending" || n.state === "ready"));
      assert.deepEqual(Object.fromEntries(counts), { createRun: 1, getRunNodes: 2 });
    } finally {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("sessionPerNode runs each node on a new executor and closes it once the node ends", async () => {
    const made = [];
    let releaseClose;
    const slowClose = new Promise((resolve) => {
      releaseClose = resolve;
    });
    const make = () => {
      const e = {
        closed: false,
        runNode: async (request) => {
          if (request.node.id === "bad") throw new Error("kaput");
          return { status: "succeeded", of: request.node.id, executor: made.indexOf(e) };
        },
        close: async () => {
          if (made.indexOf(e) === 1) await slowClose;
          e.closed = true;
        },
      };
      made.push(e);
      return e;
    };
    const executor = sessionPerNode(make);
    const request = (id, reuseSession = null) => ({ node: { id }, reuseSession });
    const signal = new AbortController().signal;
    assert.deepEqual(await executor.runNode(request("a"), signal), {
      status: "succeeded",
      of: "a",
      executor: 0,
    });
    assert.equal(executor.maxInFlight(), 1);
    const [b, d] = await Promise.all([
      executor.runNode(request("b"), signal),
      executor.runNode(request("d"), signal),
    ]);
    assert.deepEqual([b.executor, d.executor], [1, 2]);
    assert.equal(executor.maxInFlight(), 2);
    await assert.rejects(executor.runNode(request("bad"), signal), /kaput/);
    await assert.rejects(executor.runNode(request("c", "s-1"), signal), /continues session s-1/);
    assert.equal(made.length, 4); // the refused attempt made none
    let stopped = false;
    const stopping = executor.stopSessions("run-1").then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(made[0].closed, true);
    assert.equal(made[2].closed, true);
    assert.equal(made[3].closed, true); // closed although its node failed
    assert.equal(stopped, false); // waits for b's close
    releaseClose();
    await stopping;
    assert.equal(made[1].closed, true);
  });
});

describe("table", () => {
  test("renderTable pads columns, escapes pipes and marks sections", () => {
    const text = renderTable(["A", "Bee"], [{ section: "S" }, ["x|y", "1"]]);
    assert.equal(
      text,
      ["| A     | Bee |", "|-------|-----|", "| **S** |     |", "| x\\|y  | 1   |"].join("\n"),
    );
  });

  test("buildTable shows statuses and puts each target on its row", () => {
    const records = [
      {
        id: "floor/node-start",
        group: "floors",
        label: "Node start",
        status: "ok",
        median_ms: 40,
        min_ms: 39,
        max_ms: 41,
        runs: 3,
        nodes: null,
        peak_rss_kib: 40 * 1024,
        note: "",
      },
      {
        id: "langgraph/chain/10000",
        group: "langgraph",
        label: "chain of 10,000",
        status: "dnf",
        bound_s: 120,
        note: "did not finish within 120 s",
      },
    ];
    records.push(
      {
        id: "floor/roundtrip-serial",
        group: "floors",
        label: "serial",
        status: "ok",
        median_ms: 0.05,
        min_ms: 0.05,
        max_ms: 0.05,
        runs: 1,
      },
      {
        id: "api/chain/1000",
        group: "engine-api",
        label: "chain of 1,000",
        status: "ok",
        shape: "chain",
        nodes: 1000,
        median_ms: 100,
        min_ms: 90,
        max_ms: 110,
        runs: 3,
      },
      {
        id: "cli/list/many",
        group: "commands",
        label: "list",
        status: "ok",
        median_ms: 60,
        min_ms: 60,
        max_ms: 60,
        runs: 1,
      },
      {
        id: "cli/run/echo",
        group: "commands",
        label: "run examples/echo.py",
        status: "ok",
        median_ms: 84,
        min_ms: 84,
        max_ms: 84,
        runs: 1,
        alongside: { node_start_ms: 50, python_start_ms: 20 },
      },
    );
    const text = buildTable(records, {
      annotations: [
        { id: "floor/node-start", text: "TARGET-X" },
        { id: "api/chain/10000", text: "✗ not measured: TARGET-Y" },
      ],
    });
    const lines = text.split("\n");
    assert.match(
      lines.find((l) => l.includes("chain of 1,000")),
      /\| 100 µs +\| 2\.00× serial RT +\|/,
    );
    assert.match(
      lines.find((l) => l.includes("| list")),
      /1\.50× Node start/,
    );
    assert.match(
      lines.find((l) => l.includes("| run examples/echo.py")),
      /1\.20× N\+P start/,
    );
    const orphan = lines.findIndex((l) => l.includes("TARGET-Y"));
    assert.ok(orphan > lines.findIndex((l) => l.includes("Targets whose workloads did not run")));
    assert.ok(orphan > 0);
    assert.match(
      lines.find((l) => l.includes("Node start")),
      /40\.0 ms .*39\.0 ms – 41\.0 ms .*40 MiB .*TARGET-X/,
    );
    assert.match(
      lines.find((l) => l.includes("chain of 10,000")),
      /did not finish \(> 120 s\)/,
    );
  });

  test("durations and ratios are formatted for people", () => {
    assert.equal(duration(0.0682), "68.2 µs");
    assert.equal(duration(12.34), "12.3 ms");
    assert.equal(duration(1520), "1.52 s");
    assert.equal(duration(null), "–");
    assert.equal(duration(999.6), "1.00 s");
    assert.equal(duration(0.9996), "1.00 ms");
    assert.equal(duration(107_000), "107 s");
    assert.equal(duration(2_334_400), "2334 s");
    assert.equal(times(1.234), "1.23×");
    assert.equal(times(0.031), "0.031×");
  });
});

describe("run results", () => {
  const completed = (output) => ({
    outcome: "completed",
    outputs: [{ node_id: "n", activation_id: "n@iter#1", ...output }],
  });

  test("a completed run with the expected output passes", () => {
    checkRunResult(completed({ text: "x", data: null }), { kind: "echo", text: "x" });
    checkRunResult(completed({ text: "## b0\nx\n\n## b1\nx", data: null }), { kind: "fanout", n: 2 });
    checkRunResult(completed({ text: "", data: ["abc", "abc", "abc", "abc"] }), { kind: "value", part: 3 });
  });

  test("any other outcome or output fails with what was found", () => {
    assert.throws(
      () =>
        checkRunResult(
          { outcome: "node_failed", node_id: "n3", error: "boom", outputs: [] },
          { kind: "echo", text: "x" },
        ),
      /outcome "node_failed".*n3 · boom/,
    );
    assert.throws(
      () => checkRunResult(completed({ text: "y" }), { kind: "echo", text: "x" }),
      /output text "y"/,
    );
    assert.throws(
      () => checkRunResult(completed({ text: "## b0\nx" }), { kind: "fanout", n: 2 }),
      /1 sections, expected 2/,
    );
    assert.throws(
      () => checkRunResult(completed({ data: ["a"] }), { kind: "value", part: 1 }),
      /expected 4 × 1/,
    );
    assert.throws(
      () => checkRunResult({ outcome: "completed", outputs: [] }, { kind: "echo", text: "x" }),
      /0 outputs/,
    );
    assert.throws(
      () =>
        checkRunResult(
          { status: "rejected", code: "trust_required", message: "not trusted", hint: null },
          { kind: "echo", text: "x" },
        ),
      /run rejected: trust_required: not trusted/,
    );
  });

  test("lastJsonLine reads the final line of a process's output", () => {
    assert.deepEqual(lastJsonLine('noise\n{"a":1}\n\n'), { a: 1 });
    assert.equal(lastJsonLine("not json\n"), null);
    assert.equal(lastJsonLine(""), null);
  });
});

describe("generated workflows", () => {
  test("build with the shipped chrys.workflows SDK into the intended graphs", () => {
    const dir = mkdtempSync(join(tmpdir(), "icode-bench-test-"));
    try {
      const files = {
        chain: chainSource(50),
        fanout: fanoutSource(50),
        loop: loopSource(7),
        value: valueSource(10),
      };
      for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, `${name}.py`), source);
      const script = [
        "import json, runpy, sys",
        "out = {}",
        "for name in ['chain', 'fanout', 'loop', 'value']:",
        "    d = runpy.run_path(sys.argv[1] + '/' + name + '.py')['workflow'].definition.to_manifest()",
        "    out[name] = {'nodes': len(d['nodes']), 'edges': len(d['edges']), 'outputs': d['outputs'],",
        "                 'loops': [n['max_iterations'] for n in d['nodes'] if n['kind'] == 'loop']}",
        "print(json.dumps(out))",
      ].join("\n");
      const python = spawnSync(process.env.ICODE_PYTHON || "python3", ["-c", script, dir], {
        env: { ...process.env, PYTHONPATH: join(REPO_ROOT, "python") },
        encoding: "utf8",
      });
      assert.equal(python.status, 0, python.stderr);
      const built = JSON.parse(python.stdout);
      assert.deepEqual(built.chain, { nodes: 50, edges: 49, outputs: ["n49"], loops: [] });
      // src + 50 branches + join + sink; src → each branch, each branch → join, join → sink.
      assert.deepEqual(built.fanout, { nodes: 53, edges: 101, outputs: ["sink"], loops: [] });
      assert.deepEqual(built.loop.loops, [7]);
      assert.deepEqual(built.value.outputs, ["n9"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the agent workloads build into chains and fan-outs of agent nodes naming the bench profiles", () => {
    const dir = mkdtempSync(join(tmpdir(), "icode-bench-test-"));
    try {
      const files = {
        chain: agentChainSource(5, { model: "bench-openai" }),
        fanout: agentFanoutSource(4),
        acp: acpChainSource(3),
      };
      for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, `${name}.py`), source);
      const script = [
        "import json, runpy, sys",
        "out = {}",
        "for name in ['chain', 'fanout', 'acp']:",
        "    d = runpy.run_path(sys.argv[1] + '/' + name + '.py')['workflow'].definition.to_manifest()",
        "    agents = [n for n in d['nodes'] if n['kind'] == 'agent']",
        "    out[name] = {'nodes': len(d['nodes']), 'edges': len(d['edges']), 'outputs': d['outputs'],",
        "                 'agents': len(agents), 'profiles': sorted({n['profile'] for n in agents}),",
        "                 'models': sorted({str(n['model']) for n in agents})}",
        "print(json.dumps(out))",
      ].join("\n");
      const python = spawnSync(process.env.ICODE_PYTHON || "python3", ["-c", script, dir], {
        env: { ...process.env, PYTHONPATH: join(REPO_ROOT, "python") },
        encoding: "utf8",
      });
      assert.equal(python.status, 0, python.stderr);
      const built = JSON.parse(python.stdout);
      assert.deepEqual(built.chain, {
        nodes: 5,
        edges: 4,
        outputs: ["a4"],
        agents: 5,
        profiles: ["Bench"],
        models: ["bench-openai"],
      });
      // src + 4 agents + join + sink; src → each agent, each agent → join, join → sink.
      assert.deepEqual(built.fanout, {
        nodes: 7,
        edges: 9,
        outputs: ["sink"],
        agents: 4,
        profiles: ["Bench"],
        models: ["None"],
      });
      assert.deepEqual(built.acp.profiles, ["BenchAcp"]);
      assert.equal(built.acp.agents, 3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the many-workflow project mixes single files and workflow folders", () => {
    const dir = mkdtempSync(join(tmpdir(), "icode-bench-test-"));
    try {
      const { first } = writeManyProject(dir, 20);
      const entries = readdirSync(join(dir, ".chrys", "workflows"), { withFileTypes: true });
      assert.equal(entries.length, 20);
      assert.equal(entries.filter((e) => e.isDirectory()).length, 2);
      assert.equal(first, join(".chrys", "workflows", "wf-0000.py"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("warm-up", () => {
  test("every peer warms up on the same shape at up to 1,000 nodes, within its run and time budget", async () => {
    const { sample } = await import("./children/peer-shapes.mjs");
    const { warmupNodes } = await import("./lib/suites.mjs");
    assert.equal(warmupNodes({ warmupMaxNodes: 1_000 }, 100), 100);
    assert.equal(warmupNodes({ warmupMaxNodes: 1_000 }, 10_000), 1_000);
    assert.equal(warmupNodes({ warmupMaxNodes: 100 }, 1_000), 100);
    const sizes = [];
    const once = async ({ n }) => {
      sizes.push(n);
      return { buildMs: 0 };
    };
    const printed = [];
    const write = process.stdout.write;
    process.stdout.write = (text) => printed.push(text);
    try {
      await sample(
        { shape: "chain", n: 10_000, reps: 2, warmup: { n: 1_000, runs: 3, budget_ms: 60_000 } },
        once,
      );
      // A budget already spent stops the warm-up after its first run.
      await sample({ shape: "chain", n: 100, reps: 1, warmup: { n: 100, runs: 3, budget_ms: 0 } }, once);
    } finally {
      process.stdout.write = write;
    }
    assert.deepEqual(sizes, [1_000, 1_000, 1_000, 10_000, 10_000, 100, 100]);
    assert.equal(JSON.parse(printed[0]).samples_ms.length, 2);
  });
});

describe("temporary folders", () => {
  test("a run's folder is removed by the next run once its process is gone, never while it lives or when kept", async () => {
    const { keepScratch, makeScratch, removeStaleScratch } = await import("./lib/scratch.mjs");
    const root = mkdtempSync(join(tmpdir(), "icode-bench-test-"));
    try {
      const live = makeScratch(root); // this process's
      const kept = makeScratch(root);
      keepScratch(kept);
      const interrupted = makeScratch(root);
      const gone = spawnSync(process.execPath, ["-e", "0"]).pid; // a process that has exited
      writeFileSync(join(interrupted, "owner.json"), JSON.stringify({ pid: gone }));
      writeFileSync(join(interrupted, "records.jsonl"), "left behind\n");
      const unrelated = join(root, "icode-bench-pycache");
      mkdirSync(unrelated);

      assert.deepEqual(removeStaleScratch(root), [interrupted]);
      assert.deepEqual(
        readdirSync(root).sort(),
        [live, kept, unrelated].map((d) => d.slice(root.length + 1)).sort(),
      );
      assert.deepEqual(removeStaleScratch(join(root, "missing")), []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("order", () => {
  test("subjects take turns shape by shape; a peer's runs of 10,000 come last; the engine's stay in place", async () => {
    const { interleave } = await import("./lib/suites.mjs");
    const tasks = (subject, keys) =>
      keys.map((key) => {
        const [shape, n] = key.split("/");
        return { key: `${subject} ${key}`, shape, n: Number(n) };
      });
    const sizes = (shape) => [`${shape}/100`, `${shape}/1000`, `${shape}/10000`];
    const engine = tasks("api", [...sizes("chain"), ...sizes("fanout"), "value/10", "soak/10"]);
    const langgraph = tasks("lg", [...sizes("chain"), ...sizes("fanout"), "value/10"]);
    const dask = tasks("dask", [...sizes("chain"), ...sizes("fanout")]);
    assert.deepEqual(
      interleave([engine, langgraph, dask]).map((t) => t.key),
      [
        "api chain/100",
        "api chain/1000",
        "api chain/10000",
        "lg chain/100",
        "lg chain/1000",
        "dask chain/100",
        "dask chain/1000",
        "api fanout/100",
        "api fanout/1000",
        "api fanout/10000",
        "lg fanout/100",
        "lg fanout/1000",
        "dask fanout/100",
        "dask fanout/1000",
        "api value/10",
        "lg value/10",
        "api soak/10",
        "lg chain/10000",
        "dask chain/10000",
        "lg fanout/10000",
        "dask fanout/10000",
      ],
    );
    // The first subject (the engine) keeps its own order.
    assert.deepEqual(interleave([langgraph]), langgraph);
  });
});

describe("peer engines outside the workspace", () => {
  test("peerState says ready only when every pinned dependency is installed at its pinned version", () => {
    const dir = mkdtempSync(join(tmpdir(), "icode-bench-test-"));
    try {
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ dependencies: { "@scope/a": "1.2.3", b: "4.5.6" } }),
      );
      const install = (name, version) => {
        mkdirSync(join(dir, "node_modules", name), { recursive: true });
        writeFileSync(join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, version }));
      };
      assert.deepEqual(peerState(dir), {
        ready: false,
        pinned: { "@scope/a": "1.2.3", b: "4.5.6" },
        installed: { "@scope/a": null, b: null },
        stale: ["@scope/a", "b"],
      });
      install("@scope/a", "1.2.3");
      install("b", "4.5.5");
      assert.deepEqual(peerState(dir).stale, ["b"]);
      install("b", "4.5.6");
      assert.equal(peerState(dir).ready, true);
      // Ready: nothing is installed and nothing is printed.
      const logged = [];
      assert.deepEqual(ensurePeers({ repoRoot: dir, dir, env: process.env, log: (m) => logged.push(m) }), {
        ok: true,
        installed: false,
      });
      assert.deepEqual(logged, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the install command is pnpm's, pinned, frozen, and outside the workspace", () => {
    assert.deepEqual(installCommand(REPO_ROOT), [
      "npx",
      "-y",
      JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).packageManager,
      "install",
      "--dir",
      "bench/peers",
      "--frozen-lockfile",
      "--ignore-workspace",
    ]);
  });

  test("LangGraph and Mastra are pinned in bench/peers and absent from the workspace and its lockfile", () => {
    const peers = JSON.parse(readFileSync(join(PEERS_DIR, "package.json"), "utf8"));
    assert.deepEqual(Object.keys(peers.dependencies).sort(), [
      "@langchain/core",
      "@langchain/langgraph",
      "@mastra/core",
      "zod",
    ]);
    for (const version of Object.values(peers.dependencies)) assert.match(version, /^\d+\.\d+\.\d+$/);
    const peersLock = readFileSync(join(PEERS_DIR, "pnpm-lock.yaml"), "utf8");
    for (const [name, version] of Object.entries(peers.dependencies)) {
      const pinned = new RegExp(`^ +'?${name.replaceAll("/", "\\/")}'?:\\n +specifier: ${version}$`, "m");
      assert.match(peersLock, pinned, `${name} ${version} in bench/peers/pnpm-lock.yaml`);
    }
    const rootLock = readFileSync(join(REPO_ROOT, "pnpm-lock.yaml"), "utf8");
    assert.doesNotMatch(rootLock, /@langchain\/|@mastra\//);
    const bench = JSON.parse(readFileSync(join(REPO_ROOT, "bench", "package.json"), "utf8"));
    const benchDeps = { ...bench.dependencies, ...bench.devDependencies };
    for (const name of Object.keys(peers.dependencies)) assert.ok(!(name in benchDeps), name);
    const workspace = readFileSync(join(REPO_ROOT, "pnpm-workspace.yaml"), "utf8");
    assert.match(workspace, /^\s*- "!bench\/peers"$/m);
  });

  test("the peer children import LangGraph and Mastra only through bench/peers", () => {
    for (const name of readdirSync(join(REPO_ROOT, "bench", "children"))) {
      const text = readFileSync(join(REPO_ROOT, "bench", "children", name), "utf8");
      assert.doesNotMatch(text, /from "(@langchain|@mastra|zod)/, name);
    }
    const lg = readFileSync(join(REPO_ROOT, "bench", "children", "peer-langgraph.mjs"), "utf8");
    const ma = readFileSync(join(REPO_ROOT, "bench", "children", "peer-mastra.mjs"), "utf8");
    assert.match(lg, /from "\.\.\/peers\/langgraph\.mjs"/);
    assert.match(ma, /from "\.\.\/peers\/mastra\.mjs"/);
  });
});
