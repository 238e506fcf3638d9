// Engine workloads through the public engine API, in a process of their own:
//   createEngine({ cwd, env }).run({ workflowId, input, trust: true }) → { outcome, outputs, … }
// (or a handle on the active run whose `result` settles with that object).
// Modes: "runs" (sequential runs after the warm-up), "concurrent" (`concurrency` runs at once per
// sample) and "soak" (`soakRuns` sequential runs; the heap in use after a full GC, and resident memory, read
// after `soakMark` runs and at the end). Every run's outcome and output are checked. Before the measured
// runs, `job.warmup` (see lib/warmup.mjs) brings the process to its steady state; the soak starts from one
// run of its workflow.
// Usage: node --expose-gc engine-api.mjs <job.json> (the soak needs `--expose-gc`). Prints one JSON line:
// { status: "ok" | "unavailable" | "error", … }.
import { readdirSync, readFileSync } from "node:fs";
import { checkRunResult } from "../lib/check.mjs";
import { warmUp } from "../lib/warmup.mjs";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));

function print(report) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** Resident memory of this process and of every live descendant (a warm worker, if the engine keeps one). */
function residentKib() {
  const vmRss = (pid) => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return match ? Number(match[1]) : 0;
    } catch {
      return 0;
    }
  };
  const children = (pid) => {
    const found = [];
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
        if (text !== "") found.push(...text.split(/\s+/).map(Number));
      }
    } catch {
      // Not Linux, or the process is gone.
    }
    return found;
  };
  const own = vmRss(process.pid);
  let descendants = 0;
  const queue = children(process.pid);
  while (queue.length > 0) {
    const pid = queue.shift();
    descendants += vmRss(pid);
    queue.push(...children(pid));
  }
  return { own_kib: own, descendants_kib: descendants, total_kib: own + descendants };
}

/**
 * With `job.phases` (`pnpm bench --profile`): when the run's typed events happened, to split a run into
 * setup (until `workflow_run_start`: discovery, trust, worker start, load, records), waiting for the first
 * node, executing the nodes, finishing (last node to `workflow_run_end`) and settling the result.
 */
function watchPhases(events) {
  const marks = { start: null, firstNode: null, lastNode: null, end: null };
  if (!events || typeof events.on !== "function") return marks;
  events.on("workflow_run_start", () => {
    marks.start = performance.now();
  });
  events.on("node_started", () => {
    marks.firstNode ??= performance.now();
  });
  events.on("node_completed", () => {
    marks.lastNode = performance.now();
  });
  events.on("workflow_run_end", () => {
    marks.end = performance.now();
  });
  return marks;
}

function phaseDurations(t0, marks, settled) {
  const span = (a, b) => (a === null || b === null ? null : b - a);
  return {
    setup_ms: span(t0, marks.start),
    to_first_node_ms: span(marks.start, marks.firstNode),
    nodes_ms: span(marks.firstNode, marks.lastNode),
    finish_ms: span(marks.lastNode, marks.end),
    settle_ms: span(marks.end, settled),
  };
}

/**
 * Memory after a full GC (two, so that what the first one's finalizers released goes too): the V8 heap in
 * use (the soak's target) and resident memory (shown as information).
 */
function settledMemory() {
  if (typeof globalThis.gc !== "function") {
    throw new Error("the soak reads the heap after a full GC: start this child with node --expose-gc");
  }
  globalThis.gc();
  globalThis.gc();
  const usage = process.memoryUsage();
  return { ...residentKib(), heap_used_kib: Math.round(usage.heapUsed / 1024) };
}

async function main() {
  let createEngine;
  try {
    ({ createEngine } = await import("@icode/workflow-engine"));
  } catch (error) {
    return print({ status: "unavailable", error: `cannot import @icode/workflow-engine: ${error.message}` });
  }
  const engine = createEngine({ cwd: job.cwd, env: { ...process.env, CHRYS_HOME: job.chrysHome } });
  if (typeof engine.run !== "function") {
    return print({
      status: "unavailable",
      error: "createEngine(...).run is not a function: the engine's run API is not there yet",
    });
  }
  const phases = [];
  const runWorkflow = async (workflowId, input, expect, watch = false) => {
    const t0 = performance.now();
    // `run` returns the result, or a handle on the active run whose `result` settles with it.
    const started = engine.run({ workflowId, input, trust: true });
    const marks = watch && job.phases ? watchPhases(started?.events) : null;
    const result = typeof started?.then === "function" ? await started : await started?.result;
    if (marks) phases.push(phaseDurations(t0, marks, performance.now()));
    checkRunResult(result, expect);
  };
  const runOnce = () => runWorkflow(job.workflowId, job.input, job.expect, true);
  const samples = [];
  const memory = {};
  try {
    if (job.warmup && typeof engine.trust === "function") {
      // Trust the measured workflow (its load also fills the compiled-Python cache), then run the warm-up
      // workflow (the same shape, at most `warmupMaxNodes` nodes) until `runs` runs or `budget_ms` have
      // passed: V8 compiles the engine's hot paths over its first runs, which are not its steady state.
      await engine.trust(job.workflowId);
      const { workflow_id, input, expect, runs, budget_ms } = job.warmup;
      await warmUp({ runs, budgetMs: budget_ms }, () => runWorkflow(workflow_id, input, expect));
    } else {
      await runWorkflow(job.workflowId, job.input, job.expect);
    }
    if (job.mode === "runs") {
      for (let rep = 0; rep < job.reps; rep++) {
        const t0 = performance.now();
        await runOnce();
        samples.push(performance.now() - t0);
      }
    } else if (job.mode === "concurrent") {
      for (let rep = 0; rep < job.reps; rep++) {
        const t0 = performance.now();
        await Promise.all(Array.from({ length: job.concurrency }, runOnce));
        samples.push(performance.now() - t0);
      }
    } else if (job.mode === "soak") {
      for (let run = 2; run <= job.soakRuns; run++) {
        const t0 = performance.now();
        await runOnce();
        samples.push(performance.now() - t0);
        if (run === job.soakMark) memory.mark = { runs: run, ...settledMemory() };
      }
      memory.end = { runs: job.soakRuns, ...settledMemory() };
    } else {
      throw new Error(`unknown mode ${job.mode}`);
    }
  } catch (error) {
    return print({
      status: "error",
      error: error instanceof Error ? error.message : String(error),
      samples_ms: samples,
    });
  } finally {
    for (const name of ["close", "dispose"]) {
      if (typeof engine[name] === "function") await engine[name]();
    }
  }
  const report = {
    status: "ok",
    samples_ms: samples,
    memory,
    node_max_rss_kib: process.resourceUsage().maxRSS,
  };
  if (job.phases) report.phases = phases;
  print(report);
}

await main();
process.exit(0);
