// The measurements. Each suite returns records:
//   { id, group, label, subject, status, median_ms, min_ms, max_ms, runs, samples_ms, per, nodes,
//     peak_rss_kib, note, ... }
// `status` is "ok", "dnf" (did not finish within the bound), "error", "unavailable" or "skipped".
import { join } from "node:path";
import { checkRunResult } from "./check.mjs";
import { failure, lastJsonLine, runMeasured, writeJob } from "./procs.mjs";
import { median, summarize } from "./stats.mjs";
import { VALUE_PART } from "./workflows.mjs";

const BENCH_DIR = new URL("..", import.meta.url).pathname;
const child = (name) => join(BENCH_DIR, "children", name);

/** A record of `fields` summarizing `samples` (milliseconds), with the defaults every record has. */
export function record(fields, samples) {
  const base = {
    status: "ok",
    per: "run",
    nodes: null,
    peak_rss_kib: null,
    note: "",
    ...fields,
  };
  if (samples && samples.length > 0) return { ...base, ...summarize(samples) };
  return { ...base, median_ms: null, min_ms: null, max_ms: null, runs: 0, samples_ms: [] };
}

const peakOf = (runs) => Math.max(0, ...runs.map((run) => run.max_rss_kib)) || null;

// ---------------------------------------------------------------------------------------------- floors

export function floors(ctx) {
  const { plan, python, env } = ctx;
  const records = [];
  const processFloor = (id, label, argv) => {
    ctx.log(`floor: ${label}`);
    const { runs } = runMeasured(python, { argv, cwd: ctx.tmp, env, reps: plan.floorReps + 1, timeoutS: 60 });
    const bad = runs.find((run) => run.timed_out || run.exit_codes.some((code) => code !== 0));
    if (bad) return record({ id, group: "floors", label, status: "error", note: failure(bad, 60) });
    const measured = runs.slice(1);
    return record(
      { id, group: "floors", label, subject: argv.join(" "), peak_rss_kib: peakOf(measured) },
      measured.map((run) => run.wall_ms),
    );
  };
  records.push(processFloor("floor/node-start", "Node start (`node -e 0`)", [process.execPath, "-e", "0"]));
  records.push(
    processFloor("floor/python-start", `Python start (\`python -c pass\`, ${python.version})`, [
      python.executable,
      "-c",
      "pass",
    ]),
  );

  ctx.log("floor: Node ↔ Python round trip of a small JSON line");
  const rtJob = writeJob(ctx.tmp, "roundtrip", {
    python: python.executable,
    worker: join(BENCH_DIR, "python", "echo_worker.py"),
    messages: plan.rtMessages,
    reps: plan.rtReps,
  });
  const rt = runMeasured(python, {
    argv: [process.execPath, child("roundtrip.mjs"), rtJob],
    env,
    timeoutS: 300,
  });
  const rtReport = rt.runs[0].exit_codes[0] === 0 ? lastJsonLine(rt.runs[0].stdout[0]) : null;
  for (const [key, id, label] of [
    ["serial_us", "floor/roundtrip-serial", "raw round trip, serial (per message)"],
    ["pipelined_us", "floor/roundtrip-pipelined", "raw round trip, pipelined (per message)"],
  ]) {
    if (rtReport === null) {
      records.push(record({ id, group: "floors", label, status: "error", note: failure(rt.runs[0], 300) }));
    } else {
      records.push(
        record(
          {
            id,
            group: "floors",
            label,
            per: "message",
            note: `${plan.rtMessages.toLocaleString("en-US")} messages per run`,
          },
          rtReport[key].map((us) => us / 1000),
        ),
      );
    }
  }

  ctx.log("floor: JSON encode/decode of a 16 MiB string");
  const size = 16 * 1024 * 1024;
  const node = runMeasured(python, {
    argv: [process.execPath, child("json-floor.mjs"), String(size), String(plan.jsonReps)],
    env,
    timeoutS: 300,
  }).runs[0];
  const py = runMeasured(python, {
    argv: [
      python.executable,
      join(BENCH_DIR, "python", "json_floor.py"),
      String(size),
      String(plan.jsonReps),
    ],
    env,
    timeoutS: 300,
  }).runs[0];
  const nodeReport = node.exit_codes[0] === 0 ? lastJsonLine(node.stdout[0]) : null;
  const pyReport = py.exit_codes[0] === 0 ? lastJsonLine(py.stdout[0]) : null;
  const parts = [
    ["floor/json-node-encode", "JSON.stringify, 16 MiB string", nodeReport?.encode_ms, node],
    ["floor/json-node-decode", "JSON.parse, 16 MiB string", nodeReport?.decode_ms, node],
    ["floor/json-python-encode", "json.dumps, 16 MiB string", pyReport?.encode_ms, py],
    ["floor/json-python-decode", "json.loads, 16 MiB string", pyReport?.decode_ms, py],
  ];
  for (const [id, label, samples, run] of parts) {
    records.push(
      samples
        ? record({ id, group: "floors", label, per: "operation" }, samples)
        : record({ id, group: "floors", label, status: "error", note: failure(run, 300) }),
    );
  }
  if (nodeReport && pyReport) {
    const sums = nodeReport.encode_ms.map(
      (_, i) =>
        nodeReport.encode_ms[i] + nodeReport.decode_ms[i] + pyReport.encode_ms[i] + pyReport.decode_ms[i],
    );
    records.push(
      record(
        {
          id: "floor/json-16mib",
          group: "floors",
          label: "JSON floor, 16 MiB: encode + decode in both languages",
          per: "operation",
          bytes: size,
        },
        sums,
      ),
    );
  }
  return records;
}

// ------------------------------------------------------------------------------------- CLI commands

export function commands(ctx) {
  const { plan, env } = ctx;
  if (!ctx.cliBin) {
    return [
      record({
        id: "cli/commands",
        group: "commands",
        label: "icode workflow validate / list",
        status: "unavailable",
        note: "apps/cli/dist/bin.js is missing: build first (pnpm bench does)",
      }),
    ];
  }
  const records = [];
  // Each command runs in rounds with the two process floors, `node -e 0` and `python -c pass`, one process
  // of each per round: the machine's speed drifts over minutes, so the floors a cold command is compared with
  // are measured alongside it (`alongside` in its record), not only once at the start of the run.
  const floorArgv = {
    node: [process.execPath, "-e", "0"],
    python: [ctx.python.executable, "-c", "pass"],
  };
  const once = (argv_, cwd_) =>
    runMeasured(ctx.python, { argv: argv_, cwd: cwd_, env, timeoutS: plan.boundS }).runs[0];
  const measure = (id, label, args, cwd, accept) => {
    ctx.log(`command: ${label}`);
    const argv = [process.execPath, ctx.cliBin, ...args];
    const runs = [];
    const beside = { node: [], python: [] };
    for (let round = 0; round <= plan.commandReps; round++) {
      const node = once(floorArgv.node, ctx.tmp);
      const python = once(floorArgv.python, ctx.tmp);
      const run = once(argv, cwd);
      runs.push(run);
      if (round === 0) continue; // the warm-up round (page cache, V8 code cache, compiled Python)
      beside.node.push(node.wall_ms);
      beside.python.push(python.wall_ms);
    }
    for (const run of runs) {
      const problem = run.timed_out ? failure(run, plan.boundS) : accept(run);
      if (problem) {
        return record({
          id,
          group: "commands",
          label,
          status: run.timed_out ? "dnf" : "error",
          note: problem,
        });
      }
    }
    const measured = runs.slice(1);
    return record(
      {
        id,
        group: "commands",
        label,
        subject: `icode ${args.join(" ")}`,
        peak_rss_kib: peakOf(measured),
        alongside: {
          node_start_ms: median(beside.node),
          python_start_ms: median(beside.python),
        },
      },
      measured.map((run) => run.wall_ms),
    );
  };
  const validated = (run) => {
    const report = lastJsonLine(run.stdout[0]);
    if (report === null) return failure(run, plan.boundS);
    if (report.status !== "pass") {
      const first = report.diagnostics?.find((d) => d.severity === "error");
      return `validate reported ${report.status}${first ? `: ${first.code}: ${first.message}` : ""}`;
    }
    return null;
  };
  const listed = (expected) => (run) => {
    const report = lastJsonLine(run.stdout[0]);
    if (report === null || !Array.isArray(report.workflows)) return failure(run, plan.boundS);
    const project = report.workflows.filter((w) => w.source === "project").length;
    return project >= expected ? null : `list found ${project} project workflows, expected ${expected}`;
  };

  const toValidate =
    plan.validateExamples === "all"
      ? ctx.exampleNames
      : ctx.exampleNames.filter((name) => plan.validateExamples.includes(name));
  for (const name of toValidate) {
    records.push(
      measure(
        `cli/validate/${name.replace(/\.py$/, "")}`,
        `validate examples/${name}, cold`,
        ["workflow", "validate", `examples/${name}`, "--json"],
        ctx.repoRoot,
        validated,
      ),
    );
  }
  records.push(
    measure(
      "cli/validate/many",
      `validate one workflow in a project of ${ctx.manyCount.toLocaleString("en-US")}, cold`,
      ["workflow", "validate", ctx.manyFirst, "--json"],
      ctx.manyProject,
      validated,
    ),
  );
  // `icode workflow run` of examples/echo.py copied into a project of its own, trusted once (unmeasured,
  // which also fills the compiled-Python cache), then run without `--trust` in the same rounds.
  {
    const id = "cli/run/echo";
    const label = "run examples/echo.py, cold (trusted once before)";
    const expect = { kind: "echo", text: "hello" };
    const ran = (run) => {
      try {
        checkRunResult(lastJsonLine(run.stdout[0]), expect);
      } catch (error) {
        return `${error.message}; ${failure(run, plan.boundS)}`;
      }
      return run.exit_codes[0] === 0 ? null : `exit ${run.exit_codes[0]} after a completed run`;
    };
    const runArgs = ["workflow", "run", ctx.echoWorkflowId, "--input", expect.text, "--json"];
    const trusted = once([process.execPath, ctx.cliBin, ...runArgs, "--trust"], ctx.echoProject);
    const problem = trusted.timed_out ? failure(trusted, plan.boundS) : ran(trusted);
    records.push(
      problem
        ? record({
            id,
            group: "commands",
            label,
            status: trusted.timed_out ? "dnf" : "error",
            note: `the trusting run failed: ${problem}`,
          })
        : measure(id, label, runArgs, ctx.echoProject, ran),
    );
  }
  records.push(
    measure(
      "cli/list/examples",
      `list the ${ctx.exampleNames.length} examples, cold`,
      ["workflow", "list", "--json"],
      ctx.examplesProject,
      listed(ctx.exampleNames.length),
    ),
  );
  records.push(
    measure(
      "cli/list/many",
      `list ${ctx.manyCount.toLocaleString("en-US")} workflows, cold`,
      ["workflow", "list", "--json"],
      ctx.manyProject,
      listed(ctx.manyCount),
    ),
  );
  return records;
}

// ------------------------------------------------------------------------------------------- order

/** One workload of one subject, measured when `run()` is called: `{ key, shape, n, run }`. */
function task(w, run) {
  return { key: w.key, shape: w.shape, n: w.n, run };
}

/** Runs the tasks in order and returns their records. */
export function runTasks(tasks) {
  return tasks.map((t) => t.run());
}

/** A peer's runs of this many nodes or more wait until every smaller workload of every subject has run. */
const LARGE_N = 10_000;

/**
 * The order to measure several subjects' tasks in, each list in its own order, the engine's first. A target
 * compares two subjects' costs per node between 100 and 1,000 nodes, and the machine's speed drifts over
 * minutes, so those runs are measured close together: shape by shape, the engine's runs of that shape, then
 * each peer's below `LARGE_N` nodes (its 100 and its 1,000 back to back). A peer's larger runs, which take
 * minutes or do not finish, come last, shape by shape in the same way. The engine's own larger runs take
 * seconds and stay beside its others, whose growth they measure.
 */
export function interleave(lists) {
  const shapes = [];
  for (const list of lists) for (const t of list) if (!shapes.includes(t.shape)) shapes.push(t.shape);
  const placed = [];
  for (const [subject, list] of lists.entries()) {
    for (const [index, t] of list.entries()) {
      placed.push({ t, subject, index, large: subject > 0 && t.n >= LARGE_N });
    }
  }
  placed.sort(
    (a, b) =>
      Number(a.large) - Number(b.large) ||
      shapes.indexOf(a.t.shape) - shapes.indexOf(b.t.shape) ||
      a.subject - b.subject ||
      a.index - b.index,
  );
  return placed.map((p) => p.t);
}

// ---------------------------------------------------------------------------------------- workloads

const fmt = (n) => n.toLocaleString("en-US");

/**
 * The engine workloads, the same for the API, the CLI and the peers, as
 * `{ key, shape, n, label, workflowId, input, expect, nodes }`: chain, fan-out and loop at each size, the
 * large value (and its small baseline) through a 10-node chain, and 8 concurrent runs of a 100-node fan-out.
 * `shapes` selects which (a quick run measures fewer).
 */
function engineWorkloads(sizes, shapes) {
  const list = [];
  for (const n of sizes) {
    list.push({
      key: `chain/${n}`,
      shape: "chain",
      n,
      label: `chain of ${fmt(n)}`,
      workflowId: `chain-${n}`,
      input: "x",
      expect: { kind: "echo", text: "x" },
      nodes: n,
    });
  }
  for (const n of sizes) {
    list.push({
      key: `fanout/${n}`,
      shape: "fanout",
      n,
      label: `fan-out of ${fmt(n)} into a join`,
      workflowId: `fanout-${n}`,
      input: "x",
      expect: { kind: "fanout", n },
      nodes: n,
    });
  }
  for (const n of sizes) {
    list.push({
      key: `loop/${n}`,
      shape: "loop",
      n,
      label: `loop of ${fmt(n)} iterations × 2 nodes`,
      workflowId: `loop-${n}`,
      input: "x",
      expect: { kind: "echo", text: "x" },
      nodes: 2 * n,
    });
  }
  list.push({
    key: "value/small",
    shape: "value-small",
    n: 10,
    label: "10-node chain, small value (baseline)",
    workflowId: "value-10",
    input: "small",
    expect: { kind: "value", part: 8 },
    nodes: 10,
  });
  list.push({
    key: "value/big",
    shape: "value",
    n: 10,
    label: "10-node chain, 15.94 MiB value",
    workflowId: "value-10",
    input: "big",
    expect: { kind: "value", part: VALUE_PART },
    nodes: 10,
  });
  list.push({
    key: "concurrent/100",
    shape: "concurrent",
    n: 100,
    label: "8 concurrent runs of a 100-node fan-out",
    workflowId: "fanout-100",
    input: "x",
    expect: { kind: "fanout", n: 100 },
    nodes: 800,
  });
  return list.filter((w) => shapes.includes(w.shape));
}

// ------------------------------------------------------------------------------------------- engine API

/** The median of each phase over the measured runs (`--profile`), or undefined. */
function medianPhases(phases) {
  if (!Array.isArray(phases) || phases.length === 0) return undefined;
  const result = {};
  for (const key of Object.keys(phases[0])) {
    const values = phases.map((p) => p[key]).filter((v) => v !== null);
    result[key] = values.length > 0 ? median(values) : null;
  }
  return result;
}

/**
 * The size of the warm-up runs before a workload of `n` nodes: the workload itself up to `plan.warmupMaxNodes`
 * (1,000; 100 in a quick run), else the same shape at that size. Every in-process subject (the engine API,
 * each peer, dask) warms up the same way: up to `warmupRuns` runs, stopping once `warmupBudgetS` have passed.
 */
export function warmupNodes(plan, n) {
  return Math.min(n, plan.warmupMaxNodes);
}

/** Reps of one engine workload in a plan. */
function repsOf(plan, w, cli) {
  if (w.shape === "concurrent") return plan.concurrentReps;
  if (w.shape === "value" || w.shape === "value-small") return cli ? plan.cliValueReps : plan.valueReps;
  return (cli ? plan.cliReps : plan.apiReps)[w.n];
}

/**
 * The engine workloads through `createEngine().run()`, one task each (see `interleave`), each measured in a
 * child process of its own (children/engine-api.mjs): it trusts the measured workflow, warms up on runs of
 * the same shape (`warmupNodes`), then makes the measured runs. With `ctx.profileDir`, each child also
 * writes a V8 CPU profile there.
 */
export function engineApiTasks(ctx) {
  const { plan, env } = ctx;
  const tasks = [];
  let unavailable = null;
  const runChild = (w, job, timeoutS) => {
    const base = {
      id: `api/${w.key}`,
      group: "engine-api",
      label: w.label,
      subject: ctx.versions.engine,
      shape: w.shape,
      nodes: w.nodes,
    };
    if (unavailable) return record({ ...base, status: "unavailable", note: unavailable });
    ctx.log(`engine API: ${w.label}`);
    const jobPath = writeJob(ctx.tmp, base.id.replaceAll("/", "-"), {
      cwd: ctx.workloadProject,
      chrysHome: ctx.chrysHome,
      workflowId: w.workflowId,
      input: w.input,
      expect: w.expect,
      phases: ctx.profileDir !== null,
      ...job,
    });
    const profile = ctx.profileDir
      ? [
          "--cpu-prof",
          "--cpu-prof-dir",
          ctx.profileDir,
          "--cpu-prof-name",
          `${base.id.replaceAll("/", "-")}.cpuprofile`,
        ]
      : [];
    const argv = [process.execPath, "--expose-gc", ...profile, child("engine-api.mjs"), jobPath];
    const run = runMeasured(ctx.python, { argv, env, timeoutS }).runs[0];
    const report = lastJsonLine(run.stdout[0]);
    if (run.timed_out)
      return record({ ...base, status: "dnf", bound_s: timeoutS, note: failure(run, timeoutS) });
    if (report === null) return record({ ...base, status: "error", note: failure(run, timeoutS) });
    if (report.status === "unavailable") {
      unavailable = report.error;
      return record({ ...base, status: "unavailable", note: report.error });
    }
    if (report.status !== "ok") return record({ ...base, status: "error", note: report.error });
    return record(
      { ...base, peak_rss_kib: run.max_rss_kib, memory: report.memory, phases: medianPhases(report.phases) },
      report.samples_ms,
    );
  };

  const workloads = engineWorkloads(plan.apiSizes, plan.apiShapes);
  for (const w of workloads) {
    const reps = repsOf(plan, w, false);
    const warm =
      workloads.find((other) => other.shape === w.shape && other.n === warmupNodes(plan, w.n)) ?? w;
    const warmup = {
      workflow_id: warm.workflowId,
      input: warm.input,
      expect: warm.expect,
      runs: plan.warmupRuns,
      budget_ms: plan.warmupBudgetS * 1000,
    };
    const job =
      w.shape === "concurrent"
        ? { mode: "concurrent", concurrency: 8, reps, warmup }
        : { mode: "runs", reps, warmup };
    tasks.push(task(w, () => runChild(w, job, plan.boundS * (reps + 1) + plan.warmupBudgetS)));
  }
  if (plan.apiShapes.includes("soak")) {
    const w = {
      key: "soak",
      shape: "soak",
      label: `${fmt(plan.soakRuns)} consecutive runs of a 10-node chain in one engine`,
      workflowId: "chain-10",
      input: "x",
      expect: { kind: "echo", text: "x" },
      nodes: 10,
    };
    tasks.push(
      task(w, () =>
        runChild(w, { mode: "soak", soakRuns: plan.soakRuns, soakMark: plan.soakMark }, plan.soakBoundS),
      ),
    );
  }
  return tasks;
}

// ------------------------------------------------------------------------------------------- engine CLI

/** Why one CLI run did not do its work, or null. */
function cliProblem(run, k, w, boundS) {
  try {
    checkRunResult(lastJsonLine(run.stdout[k]), w.expect);
    return run.exit_codes[k] === 0 ? null : `exit ${run.exit_codes[k]} after a completed run`;
  } catch (error) {
    return `${error.message}; ${failure({ ...run, exit_codes: [run.exit_codes[k]], stderr: [run.stderr[k]] }, boundS)}`;
  }
}

/**
 * The engine workloads through `icode workflow run <id> --trust --input … --json`, a new process per run. In a
 * full run one unmeasured run comes first (trust, compiled-Python cache); a quick run relies on the API suite
 * having run the same workflows in the same configuration directory just before.
 */
export function engineCli(ctx) {
  const { plan, env } = ctx;
  if (!ctx.cliBin) {
    return [
      record({
        id: "cli/run",
        group: "engine-cli",
        label: "icode workflow run",
        status: "unavailable",
        note: "apps/cli/dist/bin.js is missing: build first (pnpm bench does)",
      }),
    ];
  }
  const records = [];
  let unavailable = null;
  for (const w of engineWorkloads(plan.cliSizes, plan.cliShapes)) {
    const base = {
      id: `cli/${w.key}`,
      group: "engine-cli",
      label: w.label,
      subject: "icode workflow run",
      shape: w.shape,
      nodes: w.nodes,
    };
    if (unavailable) {
      records.push(record({ ...base, status: "unavailable", note: unavailable }));
      continue;
    }
    ctx.log(`engine CLI: ${w.label}`);
    const parallel = w.shape === "concurrent" ? 8 : 1;
    const reps = repsOf(plan, w, true);
    const argv = [
      process.execPath,
      ctx.cliBin,
      "workflow",
      "run",
      w.workflowId,
      "--trust",
      "--input",
      w.input,
      "--json",
    ];
    const options = { argv, cwd: ctx.workloadProject, env, timeoutS: plan.boundS };
    let runs = [];
    if (plan.cliWarmup) {
      const warm = runMeasured(ctx.python, { ...options, reps: 1 }).runs[0];
      if (warm.timed_out || warm.exit_codes[0] !== 0) runs = [warm];
    }
    if (runs.length === 0) runs = runMeasured(ctx.python, { ...options, reps, parallel }).runs;
    let problem = null;
    let status = "error";
    for (const run of runs) {
      if (run.timed_out) {
        problem = failure(run, plan.boundS);
        status = "dnf";
        break;
      }
      for (let k = 0; k < run.stdout.length && problem === null; k++) {
        if (
          run.exit_codes[k] !== 0 &&
          /unknown command|Cannot find module|ERR_MODULE_NOT_FOUND/i.test(run.stderr[k])
        ) {
          unavailable = `icode workflow run is not available: ${run.stderr[k].trim().split("\n")[0]}`;
          problem = unavailable;
          status = "unavailable";
        } else {
          problem = cliProblem(run, k, w, plan.boundS);
        }
      }
      if (problem) break;
    }
    if (problem) records.push(record({ ...base, status, note: problem }));
    else
      records.push(
        record(
          { ...base, peak_rss_kib: peakOf(runs) },
          runs.map((run) => run.wall_ms),
        ),
      );
  }
  return records;
}

// ------------------------------------------------------------------------------------------------ peers

/** The peers' workloads: the engine's, without the small-value baseline (an engine-only subtraction). */
function peerWorkloads(sizes, shapes) {
  return engineWorkloads(sizes, shapes).filter((w) => w.shape !== "value-small");
}

/**
 * One peer on every shape, one task per workload (see `interleave`). Each workload first runs once in a
 * fresh process bounded by `peerBoundS`; a run past the bound is "did not finish". The remaining repetitions
 * run only while they fit the time budget. With `unavailable` (the peers could not be installed), every
 * workload is an "unavailable" record saying why.
 */
export function peerTasks(ctx, { group, name, script, subject, unavailable = null }) {
  return peerWorkloads(ctx.plan.peerSizes, ctx.plan.peerShapes).map((w) =>
    task(w, () =>
      unavailable
        ? record({
            id: `${group}/${w.key}`,
            group,
            label: w.label,
            subject,
            shape: w.shape,
            nodes: w.nodes,
            status: "unavailable",
            note: `${name} is not installed: ${unavailable}`,
          })
        : peerWorkload(ctx, { group, name, script, subject }, w),
    ),
  );
}

function peerWorkload(ctx, { group, name, script, subject }, w) {
  const { plan, env } = ctx;
  ctx.log(`${name}: ${w.label}`);
  const attempt = (reps) => {
    const warmup = {
      n: warmupNodes(plan, w.n),
      runs: plan.warmupRuns,
      budget_ms: plan.warmupBudgetS * 1000,
    };
    const argv = [process.execPath, child(script), JSON.stringify({ shape: w.shape, n: w.n, reps, warmup })];
    const timeoutS = plan.peerBoundS * reps + 60;
    const run = runMeasured(ctx.python, { argv, env, timeoutS }).runs[0];
    const report = run.exit_codes[0] === 0 ? lastJsonLine(run.stdout[0]) : null;
    return { run, report, timeoutS };
  };
  const base = { id: `${group}/${w.key}`, group, label: w.label, subject, shape: w.shape, nodes: w.nodes };
  const first = attempt(1);
  if (first.run.timed_out || (first.report && first.report.samples_ms[0] > plan.peerBoundS * 1000)) {
    return record({
      ...base,
      status: "dnf",
      bound_s: plan.peerBoundS,
      note: `did not finish within ${plan.peerBoundS} s`,
    });
  }
  if (first.report === null) {
    return record({ ...base, status: "error", note: failure(first.run, first.timeoutS) });
  }
  let samples = first.report.samples_ms;
  let build = first.report.build_ms;
  let peak = first.run.max_rss_kib;
  const more = plan.peerReps - 1;
  if (more > 0 && samples[0] * more <= plan.peerRepBudgetS * 1000) {
    const rest = attempt(more);
    if (rest.report) {
      samples = samples.concat(rest.report.samples_ms);
      build = build.concat(rest.report.build_ms);
      peak = Math.max(peak, rest.run.max_rss_kib);
    }
  }
  return record({ ...base, peak_rss_kib: peak, build_ms: build }, samples);
}

// ------------------------------------------------------------------------------------------------- dask

/**
 * dask's threaded scheduler on the same shapes, with the interpreter that has dask, one task per workload
 * (see `interleave`); a single "skipped" record without it.
 */
export function daskTasks(ctx) {
  if (!ctx.daskPython) {
    const absent = () =>
      record({
        id: "dask/absent",
        group: "dask",
        label: "dask threaded scheduler",
        status: "skipped",
        note: "dask is not installed (Debian: apt-get install python3-dask), so the dask comparisons do not apply",
      });
    return [{ key: "absent", shape: "absent", n: 0, run: absent }];
  }
  const subject = `dask ${ctx.daskPython.version} (${ctx.daskPython.executable})`;
  return peerWorkloads(ctx.plan.peerSizes, ctx.plan.peerShapes).map((w) =>
    task(w, () => daskWorkload(ctx, subject, w)),
  );
}

function daskWorkload(ctx, subject, w) {
  const { plan, env } = ctx;
  ctx.log(`dask: ${w.label}`);
  const reps = w.n >= 10_000 ? 1 : plan.daskReps;
  const script = join(BENCH_DIR, "python", "dask_shapes.py");
  const warmup = [warmupNodes(plan, w.n), plan.warmupRuns, plan.warmupBudgetS * 1000].map(String);
  const argv = [ctx.daskPython.executable, script, w.shape, String(w.n), String(reps), ...warmup];
  const timeoutS = plan.peerBoundS * reps + 30;
  const run = runMeasured(ctx.python, { argv, env, timeoutS }).runs[0];
  const report = run.exit_codes[0] === 0 ? lastJsonLine(run.stdout[0]) : null;
  const base = {
    id: `dask/${w.key}`,
    group: "dask",
    label: w.label,
    subject,
    shape: w.shape,
    nodes: w.nodes,
  };
  if (run.timed_out) {
    return record({ ...base, status: "dnf", bound_s: plan.peerBoundS, note: failure(run, timeoutS) });
  }
  if (report === null) return record({ ...base, status: "error", note: failure(run, timeoutS) });
  return record({ ...base, peak_rss_kib: run.max_rss_kib }, report.samples_ms);
}
