// The one table `pnpm bench` prints (Markdown, so that it can go into the README as it is).
import { duration, mib, renderTable, times } from "./format.mjs";
import { medianRoundRatio } from "./stats.mjs";

const SECTIONS = [
  ["floors", "Floors (same run)"],
  ["commands", "icode commands, cold (a new process per run)"],
  ["engine-api", "Engine API: createEngine().run() in one process"],
  ["engine-cli", "Engine CLI: icode workflow run --json (a new process per run)"],
  ["langgraph", "LangGraph JS (in-process)"],
  ["mastra", "Mastra workflows (in-process)"],
  ["dask", "dask threaded scheduler (in-process Python)"],
  ["agents", "Agent nodes, each next to a bare SDK client doing the same work (in rounds, one process)"],
  ["pipelines", "JSON pipelines, next to bare ACP clients doing the same work (in rounds, one process)"],
];

const HEADERS = [
  "Workload",
  "Median",
  "Min – max",
  "Runs",
  "Per node",
  "× floor",
  "Peak RSS",
  "Targets and notes",
];

/**
 * The row's figure as a multiple of a floor of the same run: per node against the serial round trip (chains,
 * loops) or the pipelined one (fan-outs), the large value against the JSON floor, cold commands against
 * process start, an agent row against its bare client (the median of the per-round ratios). Empty for the
 * floors themselves.
 */
function againstFloor(r, floors) {
  if (r.status !== "ok") return "";
  if (r.group === "agents" || r.group === "pipelines") {
    const value = Array.isArray(r.rounds) ? medianRoundRatio(r.rounds) : null;
    return value === null ? "" : `${times(value)} bare, per round`;
  }
  const of = (value, floor, name) => (floor ? `${times(value / floor)} ${name}` : "");
  // Cold commands: against the floors measured alongside them, when they were.
  const nodeStart = r.alongside?.node_start_ms ?? floors.nodeStart;
  const pythonStart = r.alongside?.python_start_ms ?? floors.pythonStart;
  if (r.id.startsWith("cli/validate/") || r.id.startsWith("cli/run/")) {
    return of(r.median_ms, nodeStart + pythonStart, "N+P start");
  }
  if (r.id.startsWith("cli/list/")) return of(r.median_ms, nodeStart, "Node start");
  if (!r.nodes) return "";
  const perNode = r.median_ms / r.nodes;
  if (r.shape === "value") return of(r.median_ms, floors.json, "JSON floor");
  if (r.shape === "fanout" || r.shape === "concurrent") return of(perNode, floors.pipelined, "pipelined RT");
  return of(perNode, floors.serial, "serial RT");
}

function medianCell(r) {
  if (r.status === "ok") return duration(r.median_ms);
  if (r.status === "dnf") return `did not finish${r.bound_s ? ` (> ${r.bound_s} s)` : ""}`;
  return r.status;
}

/** The table: one section per group, each row a workload, targets shown on the row they are computed from. */
export function buildTable(records, { annotations, sectionTitles = {}, valueBytes = null }) {
  const median = (id) => {
    const r = records.find((x) => x.id === id && x.status === "ok");
    return r ? r.median_ms : null;
  };
  const json = records.find((x) => x.id === "floor/json-16mib" && x.status === "ok");
  const floors = {
    nodeStart: median("floor/node-start"),
    pythonStart: median("floor/python-start"),
    serial: median("floor/roundtrip-serial"),
    pipelined: median("floor/roundtrip-pipelined"),
    json: json && valueBytes ? (json.median_ms * valueBytes) / json.bytes : null,
  };
  const notes = new Map();
  for (const { id, text } of annotations) notes.set(id, [...(notes.get(id) ?? []), text]);
  const rows = [];
  for (const [group, title] of SECTIONS) {
    const members = records.filter((r) => r.group === group);
    if (members.length === 0) continue;
    rows.push({ section: sectionTitles[group] ?? title });
    for (const r of members) {
      const ok = r.status === "ok";
      const perNode = ok && r.nodes ? duration(r.median_ms / r.nodes) : "";
      const texts = [...(notes.get(r.id) ?? [])];
      if (r.status === "dnf" && r.bound_s && /^did not finish within/.test(r.note)) {
        // Already said in the median column.
      } else if (r.status !== "ok" && r.note) texts.push(r.note);
      else if (r.note && r.group !== "engine-api") texts.push(r.note);
      rows.push([
        r.label,
        medianCell(r),
        ok ? `${duration(r.min_ms)} – ${duration(r.max_ms)}` : "",
        ok ? String(r.runs) : "",
        perNode,
        againstFloor(r, floors),
        ok ? mib(r.peak_rss_kib) : "",
        texts.join("; "),
      ]);
    }
  }
  const shown = new Set(records.map((r) => r.id));
  const orphans = annotations.filter((a) => !shown.has(a.id));
  if (orphans.length > 0) {
    rows.push({ section: "Targets whose workloads did not run" });
    for (const a of orphans) rows.push([a.id, "", "", "", "", "", "", a.text]);
  }
  return renderTable(HEADERS, rows);
}

/** "Targets met: 9 of 14 (1 not applicable). Not met (✗ in the table): 4." */
export function targetSummary(targets) {
  const applicable = targets.filter((t) => t.met !== null);
  const met = applicable.filter((t) => t.met);
  const missed = applicable.filter((t) => !t.met).map((t) => t.name);
  const na = targets.length - applicable.length;
  return (
    `Targets met: ${met.length} of ${applicable.length}${na > 0 ? ` (${na} not applicable)` : ""}.` +
    (missed.length > 0 ? ` Not met (✗ in the table): ${missed.length}.` : "")
  );
}
