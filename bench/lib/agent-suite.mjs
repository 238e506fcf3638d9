// The `agents` suite (issue 18): agent nodes through `createEngine().run()`, each row next to its floor, a
// bare SDK client doing the same work, measured in rounds in one child process (children/agents-native.mjs,
// children/agents-acp.mjs). Returns records as the other suites do; a row's subject record carries its
// `rounds` ({ subject_ms, floor_ms, subject_first }), from which lib/agent-targets.mjs takes the median of
// the per-round ratios, and its floor is a record of its own (`<id>/floor`) so that the table shows both.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  ACP_ID,
  ACP_NODE_START_ID,
  ACP_WARM_ID,
  floorId,
  NATIVE_VARIANTS,
  nativeId,
  PARALLEL_ID,
} from "./agent-rows.mjs";
import { count } from "./format.mjs";
import { failure, lastJsonLine, runMeasured, writeJob } from "./procs.mjs";
import { record } from "./suites.mjs";

const BENCH_DIR = new URL("..", import.meta.url).pathname;
const child = (name) => join(BENCH_DIR, "children", name);

/** What every agent's input is (the first node's; later nodes of a chain get the previous reply). */
const INPUT = "Review this change: rename `count` to `total` in stats.py.";
/** The API key the model profiles name through `{{BENCH_MODEL_KEY}}`; the provider double accepts any. */
const KEY = "sk-bench-not-a-real-key";

/**
 * Runs one agent child on `job` for the row `id` (its folders made under the run's temporary folder, its
 * CPU profile named after `id` with `--profile`) and returns `{ report, peak }` or `{ problem }`.
 */
export function runAgentChild(ctx, script, id, job, timeoutS) {
  const name = profileName(id);
  const dir = join(ctx.tmp, name);
  mkdirSync(dir, { recursive: true });
  const jobPath = writeJob(ctx.tmp, name, {
    cwd: join(dir, "project"),
    chrysHome: join(dir, "chrys-home"),
    homeDir: join(dir, "home"),
    input: INPUT,
    ...job,
  });
  const profile = ctx.profileDir
    ? ["--cpu-prof", "--cpu-prof-dir", ctx.profileDir, "--cpu-prof-name", `${name}.cpuprofile`]
    : [];
  const argv = [process.execPath, ...profile, child(script), jobPath];
  const run = runMeasured(ctx.python, { argv, env: ctx.env, timeoutS }).runs[0];
  if (run.timed_out) return { problem: { status: "dnf", bound_s: timeoutS, note: failure(run, timeoutS) } };
  const report = lastJsonLine(run.stdout[0]);
  if (report === null) return { problem: { status: "error", note: failure(run, timeoutS) } };
  if (report.status === "unavailable") return { problem: { status: "unavailable", note: report.error } };
  if (report.status !== "ok") return { problem: { status: "error", note: report.error } };
  return { report, peak: run.max_rss_kib };
}

/** The file name (without `.cpuprofile`) of the CPU profile of the child measuring `id`, and its folder's. */
export const profileName = (id) => id.replaceAll("/", "-");

/** Why one row of a child's report has no figures, or null. */
function rowProblem(row) {
  if (row === undefined) return { status: "error", note: "the child did not report this row" };
  return row.status === "ok" ? null : { status: "error", note: row.error };
}

/** The subject's record and its floor's, from a child's rounds. */
function pair(subject, floor, report, peak) {
  const rounds = report.rounds;
  return [
    record(
      { ...subject, peak_rss_kib: peak, rounds, floor_id: floorId(subject.id) },
      rounds.map((r) => r.subject_ms),
    ),
    record(
      { ...floor, id: floorId(subject.id), group: "agents", floor_of: subject.id },
      rounds.map((r) => r.floor_ms),
    ),
  ];
}

/**
 * The agent rows: a chain of native agent nodes per provider wire and call (OpenAI-compatible and
 * Anthropic, generateText and streamText), native nodes in parallel with the agent limit raised, and ACP
 * nodes (plus the interpreter's start and the bare client's warm turn, beside them).
 */
export function agentSuite(ctx) {
  const { plan, versions } = ctx;
  const records = [];
  let unavailable = null;
  const sdk = (wire) =>
    `ai ${versions.ai} + @ai-sdk/${wire === "anthropic" ? `anthropic ${versions.ai_anthropic}` : `openai-compatible ${versions.ai_openai_compatible}`}`;
  const warmup = {
    n: plan.agentWarmupNodes,
    runs: plan.agentWarmupRuns,
    budget_ms: plan.warmupBudgetS * 1000,
  };
  const boundOf = (estimateS) => Math.max(plan.boundS, Math.ceil(estimateS));

  // The native rows, in one child: each row's subject and floor records, and what its child is to do.
  const n = plan.agentChainNodes;
  const p = plan.agentParallelNodes;
  const c = plan.agentConcurrency;
  const plain = NATIVE_VARIANTS[0];
  const rows = [
    ...NATIVE_VARIANTS.map((v) => ({
      job: { key: v.key, mode: "chain", wire: v.wire, stream: v.stream, n, concurrency: 1 },
      subject: {
        id: nativeId(v),
        label: `chain of ${count(n)} native agent nodes (${v.name}, ${v.stream ? "streaming" : "plain"})`,
        shape: "agent-chain",
        nodes: n,
      },
      floor: {
        label: `↳ bare AI SDK ${v.call} loop, ${count(n)} requests in sequence`,
        subject: sdk(v.wire),
        shape: "agent-chain",
        nodes: n,
      },
    })),
    {
      job: {
        key: "parallel",
        mode: "parallel",
        wire: plain.wire,
        stream: plain.stream,
        n: p,
        concurrency: c,
      },
      subject: {
        id: PARALLEL_ID,
        label: `${count(p)} native agent nodes in parallel, ${c} at a time (maxConcurrentAgents: ${c})`,
        shape: "agent-parallel",
        nodes: p,
      },
      floor: {
        label: `↳ bare AI SDK ${plain.call}, ${count(p)} requests by ${c} concurrent callers`,
        subject: sdk(plain.wire),
        shape: "agent-parallel",
        nodes: p,
      },
    },
  ];
  const nativeChild = "agents/native";
  for (const row of rows) {
    Object.assign(row.subject, {
      group: "agents",
      subject: versions.engine,
      cpu_profile: profileName(nativeChild),
    });
  }
  ctx.log(
    `agents: native agent nodes, ${rows.length} rows in one process (${count(n)}-node chains, ${count(p)} in parallel)`,
  );
  // At most ~50 ms a node (here ~10) for the rounds and the warm-up of both sides, and 30 s a row to start.
  const nodes = rows.reduce((sum, row) => sum + row.job.n, 0);
  const native = runAgentChild(
    ctx,
    "agents-native.mjs",
    nativeChild,
    { rows: rows.map((row) => row.job), concurrency: c, rounds: plan.agentRounds, warmup, key: KEY },
    boundOf(((plan.agentRounds + 2) * 2 * nodes * 50) / 1000 + 30 * rows.length),
  );
  for (const row of rows) {
    const problem = native.problem ?? rowProblem(native.report.rows[row.job.key]);
    if (problem) {
      records.push(record({ ...row.subject, ...problem }));
      continue;
    }
    const report = native.report.rows[row.job.key];
    const subject = {
      ...row.subject,
      to_first_node_ms: report.to_first_node_ms,
      max_in_flight: report.max_in_flight,
      concurrency: row.job.concurrency,
    };
    records.push(...pair(subject, row.floor, report, native.peak));
  }
  if (native.problem?.status === "unavailable") unavailable = native.problem.note;

  // ACP: the chain and its floor, the interpreter's start and the warm turn measured in the same rounds.
  const a = plan.agentAcpNodes;
  const acpBase = {
    id: ACP_ID,
    group: "agents",
    label: `chain of ${count(a)} ACP agent nodes, an agent process and a session each (first node's start to last node's end)`,
    subject: versions.engine,
    cpu_profile: profileName(ACP_ID),
    shape: "agent-acp",
    nodes: a,
  };
  const warmSubject = {
    id: ACP_WARM_ID,
    group: "agents",
    label: "second turn on a reused ACP session (engine)",
    subject: versions.engine,
    status: "skipped",
    note: "workflow agent nodes do not reuse sessions yet (they come with JSON pipelines' reuse_session_of)",
  };
  if (unavailable) {
    records.push(record({ ...acpBase, status: "unavailable", note: unavailable }), record(warmSubject));
    return records;
  }
  ctx.log(`agents: ${acpBase.label}`);
  // At most ~1 s an agent process (here ~0.3) for the rounds, the warm-up and the warm-turn sessions.
  const acpBound = boundOf((plan.agentRounds + 2) * (2 * a + 2) + 60);
  const { report, peak, problem } = runAgentChild(
    ctx,
    "agents-acp.mjs",
    ACP_ID,
    { n: a, rounds: plan.agentRounds, warmup, warmTurns: plan.agentWarmTurns },
    acpBound,
  );
  if (problem) {
    records.push(record({ ...acpBase, ...problem }), record(warmSubject));
    return records;
  }
  records.push(
    ...pair(
      acpBase,
      {
        label: `↳ bare ACP SDK client: spawn, initialize, session/new, one prompt, exit; ${count(a)} in sequence`,
        subject: `@agentclientprotocol/sdk ${versions.acp_sdk}`,
        shape: "agent-acp",
        nodes: a,
      },
      report,
      peak,
    ),
    record(
      {
        id: ACP_NODE_START_ID,
        group: "agents",
        label: "↳ interpreter start of the agent (`node -e 0`), in the same rounds",
        subject: process.execPath,
        note: "the ACP agent double is a Node program: this much of each session is starting Node",
      },
      report.node_start_ms,
    ),
    record(warmSubject),
    record(
      {
        id: floorId(ACP_WARM_ID),
        group: "agents",
        label: `↳ bare ACP SDK client: a warm turn on an open session (median of ${plan.agentWarmTurns} per round)`,
        subject: `@agentclientprotocol/sdk ${versions.acp_sdk}`,
        per: "turn",
        floor_of: ACP_WARM_ID,
      },
      report.warm_turn_ms,
    ),
  );
  return records;
}
