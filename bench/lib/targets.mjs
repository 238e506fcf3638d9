// The targets (issue "The engine as a core for many front ends", item 7; issue 18's agent rows are in
// lib/agent-targets.mjs), each a ratio of two figures measured in the same run, written as
// `ratio ≤ limit` (a speed-up "≥ 10× faster" is `engine / peer ≤ 0.1`); and, beside them, ratios shown as
// information only, with no limit (the chain against the serial round trip and the engine against dask,
// whose targets needed task fusion: decision 0027; resident memory; an ACP agent's interpreter start).
// Pure: records in, targets out.
import { agentTargets } from "./agent-targets.mjs";
import { count, duration, mib, times } from "./format.mjs";
import { pipelineTargets } from "./pipeline-targets.mjs";
import { ratio, slope, target } from "./stats.mjs";

/**
 * Computes the targets from the records of one run. Returns `{ targets, information, annotations }`:
 * `targets` for latest.json (`{ name, ratio, limit, met, note? }`), `information` likewise without a limit
 * (`{ name, ratio, note? }`), and `annotations` as `{ id, text }` naming the table row that shows each one.
 */
export function computeTargets(records, { apiSizes, valueBytes, daskInstalled, soakRuns, soakMark }) {
  const byId = new Map(records.map((r) => [r.id, r]));
  const ok = (id) => {
    const r = byId.get(id);
    return r && r.status === "ok" ? r : null;
  };
  const ms = (id) => ok(id)?.median_ms ?? null;
  const why = (...ids) => {
    const bad = ids
      .map((id) => byId.get(id) ?? { id, status: "missing", note: "not measured" })
      .find((r) => r.status !== "ok");
    return bad ? `not measured: ${bad.id} ${bad.status}${bad.note ? ` (${bad.note})` : ""}` : undefined;
  };
  const targets = [];
  const information = [];
  const annotations = [];
  /** Records target `t` on row `id`: `text` when it applies, `naText` (or "n/a: <name>") when not. */
  const add = (id, t, text, naText) => {
    targets.push(t);
    if (t.met === null) annotations.push({ id, text: naText ?? `n/a: ${t.name}` });
    else if (t.ratio === null) annotations.push({ id, text: `✗ not measured: ${t.name}` });
    else annotations.push({ id, text: `${text} (limit ${t.limit}) ${t.met ? "✓ met" : "✗ NOT met"}` });
  };
  /** A ratio shown for information: in `information` and on its row, never counted as met or missed. */
  const inform = (id, name, r, text, note) => {
    information.push(note === undefined ? { name, ratio: r } : { name, ratio: r, note });
    if (r !== null) annotations.push({ id, text: `${text} (information)` });
  };

  const [mid, top] = apiSizes.slice(-2);
  const span = `t(${count(top)}) − t(${count(mid)})`;

  // Per node against the raw round trip: the marginal cost of one more node. The fan-out's is a target; the
  // chain's is information, since a chain node is a full round trip and its start is written before its code
  // runs (decision 0027: no fusion).
  for (const [shape, floorId, limit, floorName] of [
    ["fanout", "floor/roundtrip-pipelined", 2, "pipelined"],
    ["chain", "floor/roundtrip-serial", null, "serial"],
  ]) {
    const a = ms(`api/${shape}/${mid}`);
    const b = ms(`api/${shape}/${top}`);
    const floor = ms(floorId);
    const perNode = a !== null && b !== null ? slope({ n: mid, ms: a }, { n: top, ms: b }) : null;
    const r = perNode === null ? null : ratio(perNode, floor);
    const label = shape === "chain" ? "Chain" : "Fan-out";
    const note =
      r === null
        ? why(`api/${shape}/${mid}`, `api/${shape}/${top}`, floorId)
        : `marginal cost per node (${span}) / ${count(top - mid)} = ${duration(perNode)}; ${floorName} round trip ${duration(floor)}`;
    const text = `${r === null ? "–" : `${duration(perNode)}/node = ${times(r)}`} ${floorName} round trip`;
    if (limit === null) {
      inform(
        `api/${shape}/${top}`,
        `${label}: per trivial Python node / the ${floorName} raw round trip`,
        r,
        text,
        note,
      );
    } else {
      add(
        `api/${shape}/${top}`,
        target(`${label}: per trivial Python node ≤ ${limit}× the ${floorName} raw round trip`, r, limit, {
          note,
        }),
        text,
      );
    }
  }

  // Linear growth.
  for (const shape of ["chain", "fanout", "loop"]) {
    const a = ms(`api/${shape}/${mid}`);
    const b = ms(`api/${shape}/${top}`);
    const r = a === null || b === null ? null : ratio(b, a);
    const name = { chain: "Chain", fanout: "Fan-out", loop: "Loop" }[shape];
    add(
      `api/${shape}/${top}`,
      target(`${name}: time(${count(top)}) / time(${count(mid)}) ≤ 12 (linear growth)`, r, 12, {
        note: r === null ? why(`api/${shape}/${mid}`, `api/${shape}/${top}`) : undefined,
      }),
      `growth ${times(r)} from ${count(mid)}`,
    );
  }

  // Against the peers, per node on the chain and fan-out of 1,000: the marginal cost of a node between runs
  // of 100 and 1,000 nodes, computed the same way for every engine. It leaves out what a run costs whatever
  // its size (for the engine: starting a Python process; for a peer: next to nothing), which is not a cost
  // "per node"; what grows with the graph (building, loading, validating it) stays in. dask is shown as
  // information: it runs its tasks in-process, which a chain through the worker cannot match (decision 0027).
  const peers = [
    ["langgraph", "LangGraph JS", 10, true],
    ["mastra", "Mastra", 5, true],
    ["dask", "dask's threaded scheduler", null, daskInstalled],
  ];
  const perNode = (group, shape) => {
    const small = byId.get(`${group}/${shape}/100`);
    const large = byId.get(`${group}/${shape}/1000`);
    if (small?.status !== "ok") return { value: null, bound: false };
    if (large?.status === "ok") {
      return {
        value: slope({ n: 100, ms: small.median_ms }, { n: 1000, ms: large.median_ms }),
        bound: false,
      };
    }
    if (large?.status === "dnf") {
      return {
        value: slope({ n: 100, ms: small.median_ms }, { n: 1000, ms: large.bound_s * 1000 }),
        bound: true,
      };
    }
    return { value: null, bound: false };
  };
  for (const [group, name, factor, present] of peers) {
    if (!present) continue;
    for (const shape of ["chain", "fanout"]) {
      const peerId = `${group}/${shape}/1000`;
      const shapeName = shape === "chain" ? "chain" : "fan-out";
      const engine = perNode("api", shape);
      const peer = perNode(group, shape);
      let r = null;
      let note;
      if (engine.value !== null && peer.value !== null && !engine.bound) {
        r = ratio(engine.value, peer.value);
        note = `per node (t(1,000) − t(100)) / 900: engine ${duration(engine.value)}, ${name} ${duration(peer.value)}`;
        if (peer.bound) note += ` (${name} did not finish 1,000 within the bound: a lower bound of its cost)`;
      } else {
        note = why(`api/${shape}/100`, `api/${shape}/1000`, `${group}/${shape}/100`, peerId);
      }
      const speedup =
        r === null ? "" : r <= 1 ? ` (${(1 / r).toFixed(1)}× faster)` : ` (${r.toFixed(1)}× slower)`;
      const text = `engine / ${name} per node = ${times(r)}${speedup}`;
      if (factor === null) {
        inform(peerId, `${shapeName} of 1,000: engine / ${name} per node`, r, text, note);
        continue;
      }
      const limit = Number((1 / factor).toPrecision(3));
      const title = `${shapeName} of 1,000: ≥ ${factor}× faster per node than ${name}`;
      add(peerId, target(title, r, limit, { note }), text);
    }
  }

  // Cold commands against process start: the floors measured alongside the command (in rounds with it),
  // else those of the floors suite.
  {
    const startOf = (id, which) => {
      const beside = ok(id)?.alongside?.[`${which}_start_ms`];
      return typeof beside === "number" ? beside : ms(`floor/${which}-start`);
    };
    for (const [id, name] of [
      ["cli/validate/echo", "validate cold on one workflow"],
      ["cli/run/echo", "run examples/echo.py cold (trusted once before)"],
    ]) {
      const command = ms(id);
      const node = startOf(id, "node");
      const python = startOf(id, "python");
      const r = command === null || node === null || python === null ? null : ratio(command, node + python);
      add(
        id,
        target(`${name} ≤ 1.3× (Node start + Python start)`, r, 1.3, {
          note: r === null ? why(id, "floor/node-start", "floor/python-start") : undefined,
        }),
        `${times(r)} (Node start + Python start${ok(id)?.alongside ? ", measured alongside" : ""})`,
      );
    }
    const list = ms("cli/list/many");
    const listNode = startOf("cli/list/many", "node");
    const rl = list === null || listNode === null ? null : ratio(list, listNode);
    add(
      "cli/list/many",
      target("list over 1,000 workflows ≤ 1.5× Node start", rl, 1.5, {
        note: rl === null ? why("cli/list/many", "floor/node-start") : undefined,
      }),
      `${times(rl)} Node start${ok("cli/list/many")?.alongside ? " (measured alongside)" : ""}`,
    );
  }

  // The large value: what it adds to the same 10-node chain, against the JSON floor scaled to its size.
  {
    const big = ms("api/value/big");
    const small = ms("api/value/small");
    const floorRecord = ok("floor/json-16mib");
    const floor = floorRecord ? (floorRecord.median_ms * valueBytes) / floorRecord.bytes : null;
    const added = big !== null && small !== null ? big - small : null;
    const r = added === null ? null : ratio(added, floor);
    add(
      "api/value/big",
      target("16 MiB value through a 10-node chain ≤ 3× the JSON encode/decode floor", r, 3, {
        note:
          r === null
            ? why("api/value/big", "api/value/small", "floor/json-16mib")
            : `added by the value: ${duration(added)} (large − small run); floor ${duration(floor)} for ${(valueBytes / 2 ** 20).toFixed(2)} MiB`,
      }),
      `${duration(added)} added = ${times(r)} JSON floor`,
    );
  }

  // Memory after many runs: the V8 heap in use after a full GC (the target), and resident memory of the
  // process and its live children (information: it moves with V8's and glibc's memory policy).
  {
    const soak = ok("api/soak");
    const mark = soak?.memory?.mark;
    const end = soak?.memory?.end;
    const heap = (m) => (typeof m?.heap_used_kib === "number" ? m.heap_used_kib : null);
    const rh = heap(mark) !== null && heap(end) !== null ? ratio(heap(end), heap(mark)) : null;
    add(
      "api/soak",
      target(
        `engine heap in use after a full GC: after ${count(soakRuns)} runs ≤ 1.1× after ${soakMark}`,
        rh,
        1.1,
        {
          note:
            rh === null
              ? (why("api/soak") ?? "the soak record has no heap_used_kib")
              : `heap used ${mib(heap(mark), 1)} after ${mark.runs} runs, ${mib(heap(end), 1)} after ${end.runs} (global.gc(), then process.memoryUsage().heapUsed)`,
        },
      ),
      `heap ${mib(heap(mark), 1)} → ${mib(heap(end), 1)} = ${times(rh)}`,
    );
    const rss = mark && end ? ratio(end.total_kib, mark.total_kib) : null;
    inform(
      "api/soak",
      `engine RSS after ${count(soakRuns)} runs / after ${soakMark}`,
      rss,
      `RSS ${mib(mark?.total_kib)} → ${mib(end?.total_kib)} = ${times(rss)}`,
      rss === null
        ? why("api/soak")
        : `RSS ${mib(mark.total_kib)} after ${mark.runs} runs, ${mib(end.total_kib)} after ${end.runs} (process and live children, after GC)`,
    );
  }
  // The agent rows (issue 18): agent nodes against bare SDK clients, in rounds.
  agentTargets({ ok, why, add, inform });
  // The pipeline row (issue 19): a layered pipeline of ACP nodes against bare clients, in rounds.
  pipelineTargets({ ok, why, add, inform });
  return { targets, information, annotations };
}
