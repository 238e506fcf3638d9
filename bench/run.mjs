// `pnpm bench [--quick]`: measures the iCode workflow engine against floors measured in the same run and
// against peer engines, prints one table and writes bench/results/latest.json (and latest.md, the table).
// Run it through `pnpm bench`, which builds the CLI and the engine first.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { agentSuite } from "./lib/agent-suite.mjs";
import { ensurePeers, PEERS_DIR } from "./lib/peers.mjs";
import { pipelineSuite } from "./lib/pipeline-suite.mjs";
import { findDaskPython, resolvePython, useScratch } from "./lib/procs.mjs";
import { readProfile, topFunctions } from "./lib/profile.mjs";
import { buildTable, targetSummary } from "./lib/report.mjs";
import { keepScratch, makeScratch, removeStaleScratch } from "./lib/scratch.mjs";
import {
  commands,
  daskTasks,
  engineApiTasks,
  engineCli,
  floors,
  interleave,
  peerTasks,
  runTasks,
} from "./lib/suites.mjs";
import { computeTargets } from "./lib/targets.mjs";
import {
  chainSource,
  fanoutSource,
  loopSource,
  VALUE_BYTES,
  valueSource,
  writeCopyProject,
  writeExamplesProject,
  writeManyProject,
  writeProject,
} from "./lib/workflows.mjs";

const BENCH_DIR = new URL(".", import.meta.url).pathname;
const REPO_ROOT = join(BENCH_DIR, "..");

const ALL_SHAPES = ["chain", "fanout", "loop", "value-small", "value", "concurrent"];

/**
 * What each mode measures. A quick run keeps every target (the engine API still runs 10,000 nodes, once) and
 * drops what no target needs: most repetitions, most CLI and peer workloads, peers at 10,000.
 */
const PLANS = {
  full: {
    floorReps: 10,
    rtMessages: 20_000,
    rtReps: 5,
    jsonReps: 5,
    commandReps: 10,
    validateExamples: "all",
    apiSizes: [100, 1_000, 10_000],
    apiShapes: [...ALL_SHAPES, "soak"],
    apiReps: { 100: 5, 1000: 5, 10000: 3 },
    valueReps: 5,
    concurrentReps: 3,
    warmupRuns: 3,
    warmupBudgetS: 3,
    warmupMaxNodes: 1_000,
    soakRuns: 1_000,
    soakMark: 10,
    soakBoundS: 3_600,
    cliSizes: [100, 1_000, 10_000],
    cliShapes: ["chain", "fanout", "loop", "value", "concurrent"],
    cliReps: { 100: 3, 1000: 3, 10000: 2 },
    cliValueReps: 2,
    cliWarmup: true,
    peerSizes: [100, 1_000, 10_000],
    peerShapes: ["chain", "fanout", "loop", "value", "concurrent"],
    peerReps: 3,
    peerBoundS: 120,
    peerRepBudgetS: 60,
    daskReps: 3,
    boundS: 120,
    manyCount: 1_000,
    agentChainNodes: 1_000,
    agentParallelNodes: 1_000,
    agentConcurrency: 50,
    agentRounds: 5,
    agentWarmupNodes: 100,
    agentWarmupRuns: 3,
    agentAcpNodes: 20,
    agentWarmTurns: 20,
    pipelineLayers: 20,
    pipelineRounds: 5,
    pipelineWarmupRuns: 1,
  },
  quick: {
    floorReps: 3,
    rtMessages: 5_000,
    rtReps: 3,
    jsonReps: 3,
    commandReps: 2,
    validateExamples: ["echo.py"],
    apiSizes: [100, 1_000, 10_000],
    apiShapes: ["chain", "fanout", "loop", "value-small", "value", "soak"],
    apiReps: { 100: 1, 1000: 1, 10000: 1 },
    valueReps: 1,
    concurrentReps: 1,
    warmupRuns: 3,
    warmupBudgetS: 1,
    warmupMaxNodes: 100,
    soakRuns: 30,
    soakMark: 10,
    soakBoundS: 300,
    cliSizes: [1_000],
    cliShapes: ["chain", "fanout"],
    cliReps: { 1000: 1 },
    cliValueReps: 1,
    cliWarmup: false,
    peerSizes: [100, 1_000],
    peerShapes: ["chain", "fanout"],
    peerReps: 1,
    peerBoundS: 30,
    peerRepBudgetS: 0,
    daskReps: 3,
    boundS: 60,
    manyCount: 1_000,
    agentChainNodes: 20,
    agentParallelNodes: 100,
    agentConcurrency: 50,
    agentRounds: 5,
    agentWarmupNodes: 20,
    agentWarmupRuns: 1,
    agentAcpNodes: 2,
    agentWarmTurns: 5,
    pipelineLayers: 5,
    pipelineRounds: 5,
    pipelineWarmupRuns: 1,
  },
};

const SUITES = ["floors", "commands", "api", "cli", "peers", "dask", "agents", "pipelines"];

const USAGE = `Usage: pnpm bench [--quick] [--only ${SUITES.join(",")}] [--out FILE] [--keep] [--profile]
       node bench/run.mjs --from FILE [--out FILE]

  --quick   a smaller run (about two minutes on 2 cores); every target is still computed
  --only    run only these suites (targets that need the others are reported as not measured)
  --out     where to write the JSON results (default bench/results/latest.json; the table goes beside it)
  --keep    keep the temporary folder of generated workflows and records (without --keep it is removed
            at the end, or by the next run when this one is interrupted)
  --profile write a V8 CPU profile of each engine-API workload and agent child to bench/results/profiles/
            and list the functions with the most self time (and each run's phases) under the table
  --from    print the table and targets of an earlier results file again, without measuring
`;

function packageVersion(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8")).version;
  } catch {
    return null;
  }
}

function gitRevision() {
  const head = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8" });
  if (head.status !== 0) return null;
  const dirty = spawnSync("git", ["status", "--porcelain"], { cwd: REPO_ROOT, encoding: "utf8" });
  return `${head.stdout.trim()}${dirty.stdout.trim() !== "" ? " (with uncommitted changes)" : ""}`;
}

function main() {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      profile: { type: "boolean", default: false },
      from: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.from) return rerender(values.from, values.out);
  const only = values.only ? values.only.split(",").map((s) => s.trim()) : SUITES;
  const unknown = only.filter((s) => !SUITES.includes(s));
  if (unknown.length > 0) {
    process.stderr.write(`bench: unknown suite ${unknown.join(", ")}\n\n${USAGE}`);
    return 2;
  }
  const mode = values.quick ? "quick" : "full";
  const plan = PLANS[mode];
  const outPath = values.out ?? join(BENCH_DIR, "results", "latest.json");
  const startedAt = new Date();
  const t0 = performance.now();
  const log = (message) =>
    process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);

  for (const dir of removeStaleScratch(os.tmpdir())) log(`removed ${dir}, left by an interrupted run`);
  const tmp = makeScratch(os.tmpdir());
  useScratch(tmp);
  const chrysHome = join(tmp, "chrys-home");
  mkdirSync(chrysHome, { recursive: true });
  const env = { ...process.env, CHRYS_HOME: chrysHome };
  try {
    // LangGraph and Mastra are not in the workspace install: the first run that needs them installs them.
    const peers = only.includes("peers") ? ensurePeers({ repoRoot: REPO_ROOT, env: process.env, log }) : null;
    if (peers && !peers.ok) log(`peers unavailable: ${peers.error}`);
    const python = resolvePython(env);
    const daskPython = findDaskPython(python, env);
    const cliBin = join(REPO_ROOT, "apps", "cli", "dist", "bin.js");
    const versions = {
      node: process.version,
      python: python.version,
      python_executable: python.executable,
      engine: `@icode/workflow-engine ${packageVersion(join(REPO_ROOT, "packages", "engine", "package.json"))}`,
      cli: `@icode/cli ${packageVersion(join(REPO_ROOT, "apps", "cli", "package.json"))}`,
      langgraph: packageVersion(join(PEERS_DIR, "node_modules", "@langchain", "langgraph", "package.json")),
      langchain_core: packageVersion(join(PEERS_DIR, "node_modules", "@langchain", "core", "package.json")),
      mastra: packageVersion(join(PEERS_DIR, "node_modules", "@mastra", "core", "package.json")),
      dask: daskPython?.version ?? null,
      dask_python: daskPython?.executable ?? null,
      ai: packageVersion(join(BENCH_DIR, "node_modules", "ai", "package.json")),
      ai_openai_compatible: packageVersion(
        join(BENCH_DIR, "node_modules", "@ai-sdk", "openai-compatible", "package.json"),
      ),
      ai_anthropic: packageVersion(join(BENCH_DIR, "node_modules", "@ai-sdk", "anthropic", "package.json")),
      pipelines: packageVersion(join(REPO_ROOT, "packages", "pipelines", "package.json")),
      agents: packageVersion(join(REPO_ROOT, "packages", "agents", "package.json")),
      acp_sdk: packageVersion(join(BENCH_DIR, "node_modules", "@agentclientprotocol", "sdk", "package.json")),
      git: gitRevision(),
    };
    const machine = {
      cores: os.availableParallelism(),
      cpu: os.cpus()[0]?.model ?? "unknown",
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    };
    log(
      `mode ${mode} · ${machine.cores} cores · Node ${versions.node} · Python ${versions.python} (${python.executable})`,
    );
    log(
      daskPython
        ? `dask ${daskPython.version} with ${daskPython.executable}`
        : "dask not installed: dask rows skipped",
    );

    // Every size any suite runs, and 100 for the concurrent fan-out.
    const sizes = [...new Set([...plan.apiSizes, ...plan.cliSizes, 100])];
    const workloadProject = writeProject(join(tmp, "workloads"), [
      ...sizes.flatMap((n) => [
        [`chain-${n}`, chainSource(n)],
        [`fanout-${n}`, fanoutSource(n)],
        [`loop-${n}`, loopSource(n)],
      ]),
      ["chain-10", chainSource(10)],
      ["value-10", valueSource(10)],
    ]);
    const many = writeManyProject(join(tmp, "many"), plan.manyCount);
    const examplesDir = join(REPO_ROOT, "examples");
    const examplesProject = join(tmp, "examples-project");
    const exampleNames = writeExamplesProject(examplesProject, examplesDir);
    const echoProject = join(tmp, "echo-project");
    const echoWorkflowId = writeCopyProject(echoProject, join(examplesDir, "echo.py"));
    const ctx = {
      plan,
      python,
      daskPython,
      env,
      tmp,
      chrysHome,
      log,
      versions,
      repoRoot: REPO_ROOT,
      cliBin: existsSync(cliBin) ? cliBin : null,
      workloadProject,
      manyProject: many.project,
      manyFirst: many.first,
      manyCount: plan.manyCount,
      examplesProject,
      exampleNames,
      echoProject,
      echoWorkflowId,
      profileDir: values.profile ? join(BENCH_DIR, "results", "profiles") : null,
    };
    if (ctx.profileDir) {
      rmSync(ctx.profileDir, { recursive: true, force: true });
      mkdirSync(ctx.profileDir, { recursive: true });
    }

    const records = [];
    if (only.includes("floors")) records.push(...floors(ctx));
    if (only.includes("commands")) records.push(...commands(ctx));
    // The engine API, the peers and dask take turns, shape by shape: what a target compares is measured
    // within a minute or two, not ten (see `interleave`).
    const compared = [];
    if (only.includes("api")) compared.push(engineApiTasks(ctx));
    if (only.includes("peers")) {
      compared.push(
        peerTasks(ctx, {
          group: "langgraph",
          name: "LangGraph JS",
          script: "peer-langgraph.mjs",
          subject: `@langchain/langgraph ${versions.langgraph}`,
          unavailable: peers.ok ? null : peers.error,
        }),
        peerTasks(ctx, {
          group: "mastra",
          name: "Mastra",
          script: "peer-mastra.mjs",
          subject: `@mastra/core ${versions.mastra}`,
          unavailable: peers.ok ? null : peers.error,
        }),
      );
    }
    if (only.includes("dask")) compared.push(daskTasks(ctx));
    records.push(...runTasks(interleave(compared)));
    if (only.includes("agents")) records.push(...agentSuite(ctx));
    if (only.includes("pipelines")) records.push(...pipelineSuite(ctx));
    if (only.includes("cli")) records.push(...engineCli(ctx));

    const durationS = (performance.now() - t0) / 1000;
    const results = {
      format: 2,
      mode,
      started_at: startedAt.toISOString(),
      duration_s: Number(durationS.toFixed(1)),
      machine,
      versions,
      plan,
      records,
      targets: [],
      information: [],
    };
    const rendered = render(results);
    results.targets = rendered.targets;
    results.information = rendered.information;
    const profiles = ctx.profileDir ? profileSummary(records, ctx.profileDir) : "";
    process.stdout.write(`\n${rendered.text}${profiles}`);
    publish(outPath, results, rendered.text);
    log(`wrote ${outPath}`);
    return 0;
  } finally {
    if (values.keep) {
      keepScratch(tmp);
      log(`kept ${tmp}`);
    } else {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

/** The targets and the printed report (heading, table, summary) of a run's results. */
function render(results) {
  const { plan, versions, machine, records } = results;
  const { targets, information, annotations } = computeTargets(records, {
    apiSizes: plan.apiSizes,
    valueBytes: VALUE_BYTES,
    daskInstalled: versions.dask !== null,
    soakRuns: plan.soakRuns,
    soakMark: plan.soakMark,
  });
  const table = buildTable(records, {
    annotations,
    valueBytes: VALUE_BYTES,
    sectionTitles: {
      "engine-api": `Engine API: createEngine().run() in one process (${versions.engine})`,
      langgraph: `LangGraph JS ${versions.langgraph} (in-process)`,
      mastra: `Mastra workflows, @mastra/core ${versions.mastra} (in-process)`,
      dask: `dask ${versions.dask ?? "(not installed)"} threaded scheduler (in-process Python)`,
      agents: `Agent nodes through createEngine().run() (${versions.engine}), each next to a bare SDK client doing the same work, in rounds in one process; "× floor" is the median of the per-round ratios`,
      pipelines: `JSON pipelines through drivePipelineRun (@icode/pipelines ${versions.pipelines}) with the real ACP node executor, next to bare ACP SDK clients doing the same work, in rounds in one process; "× floor" is the median of the per-round ratios`,
    },
  });
  const heading =
    `iCode workflow engine benchmark · ${results.mode} mode · ${results.started_at.slice(0, 10)} · ` +
    `${machine.cores} cores (${machine.cpu}) · Node ${versions.node} · Python ${versions.python}` +
    ` · ${results.duration_s.toFixed(0)} s`;
  return { targets, information, text: `${heading}\n\n${table}\n\n${targetSummary(targets)}\n` };
}

/** Writes the JSON results and, beside them, the table as Markdown. */
function publish(outPath, results, text) {
  mkdirSync(join(outPath, ".."), { recursive: true });
  writeAtomic(outPath, `${JSON.stringify(results, null, 2)}\n`);
  writeAtomic(`${outPath.replace(/\.json$/, "")}.md`, text);
}

/** `--from FILE`: the table and targets of an earlier run again (after a change to the report), no measuring. */
function rerender(path, outPath) {
  const results = JSON.parse(readFileSync(path, "utf8"));
  const rendered = render(results);
  results.targets = rendered.targets;
  results.information = rendered.information;
  process.stdout.write(`\n${rendered.text}`);
  publish(outPath ?? path, results, rendered.text);
  return 0;
}

/**
 * Attaches the top self-time functions of each profiled record and returns them as text: an engine-API
 * workload's child, or an agent child (`cpu_profile`), which measures several rows, each engine next to
 * its floor, in one process (its profile is listed once, under the labels of its rows).
 */
function profileSummary(records, dir) {
  const files = new Map();
  for (const r of records) {
    const name =
      r.group === "engine-api"
        ? r.id.replaceAll("/", "-")
        : r.group === "agents" || r.group === "pipelines"
          ? r.cpu_profile
          : undefined;
    if (name === undefined) continue;
    const path = join(dir, `${name}.cpuprofile`);
    if (!existsSync(path)) continue;
    files.set(path, [...(files.get(path) ?? []), r]);
  }
  let text = "";
  for (const [path, members] of files) {
    const top = topFunctions(readProfile(path));
    for (const r of members) r.profile = { file: path, top };
    const [r] = members;
    const what =
      r.group === "agents" || r.group === "pipelines"
        ? `${members.map((m) => m.label).join("; ")} (one Node process: the engine and the bare clients, self time)`
        : `${r.label} (Node process, self time)`;
    text += `\nProfile of ${what}:\n`;
    if (r.phases) {
      const parts = Object.entries(r.phases).map(
        ([k, v]) => `${k.replace(/_ms$/, "")} ${v === null ? "–" : `${v.toFixed(0)} ms`}`,
      );
      text += `  phases (median run): ${parts.join(", ")}\n`;
    }
    for (const f of top) {
      text += `  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.self_ms.toFixed(0).padStart(7)} ms  ${f.name}  ${f.where}\n`;
    }
  }
  return text;
}

function writeAtomic(path, text) {
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

process.exitCode = main();
