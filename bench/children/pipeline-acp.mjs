// The pipeline row (issue 19): a JSON pipeline of `layers` layers of `width` ACP agent nodes (each node of a
// layer depends on every node of the one before), driven by `drivePipelineRun` of @icode/pipelines with the
// real node executor (`createPipelineNodeExecutor` of @icode/workflow-agents/pipeline) and the real SQLite
// store in a temporary configuration folder, against what 10 parallel launches allow, in one process:
//   subject: one run of the pipeline (create the run, drive it to `succeeded`, stop its agent sessions);
//            each node spawns the scripted ACP agent double, `initialize`, `session/new` (with the engine's
//            handoff MCP server), one prompt answered after `delay_ms` with a valid `submit_handoff`; each
//            node's session is stopped once the node ends (lib/pipeline-glue.mjs, `sessionPerNode`);
//   floor:   `layers` layers of `width` bare ACP SDK clients at once (`client()` of
//            @agentclientprotocol/sdk over the child's stdio): spawn the same agent double, `initialize`,
//            `session/new`, one prompt answered after `delay_ms`, close stdin and wait for the exit.
// Beside them, per round and untimed by it: a bare session's start alone (spawn to `session/new` answered,
// the median of 3), for the arithmetic ideal `layers × (delay_ms + start)`. The store the driver gets is a
// counting proxy over the SQLite store (the store itself unchanged): every method call during the drive is
// counted, by method, for the store's operations per second and per node.
// Usage: node pipeline-acp.mjs <job.json>. Prints one JSON line: { status: "ok" | "unavailable" | "error", … }.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bareAcpSession } from "../lib/bare-acp.mjs";
import { countingStore, layeredPipeline, sessionPerNode } from "../lib/pipeline-glue.mjs";
import { measureRounds } from "../lib/rounds.mjs";
import { median } from "../lib/stats.mjs";
import { warmUp } from "../lib/warmup.mjs";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
/** The handoff every node submits, and what the bare client's agent answers. */
const SUMMARY = "done";
const PROFILE = "BenchPipelineAcp";

function print(report) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/** The environment the pipeline gives its nodes (the driver's `env`); the bare client starts the agent with it. */
function nodeEnvironment(home) {
  return { PATH: process.env.PATH ?? "", HOME: home };
}

/**
 * A bare client session: spawn, `initialize`, `session/new`, one prompt, close stdin, wait for the exit.
 * Returns `{ start_ms }`: from the spawn to `session/new` answered.
 */
async function bareSession(acp, agentCommand) {
  const { start_ms } = await bareAcpSession(acp, agentCommand, {
    cwd: job.cwd,
    env: nodeEnvironment(job.homeDir),
    texts: ["Do the task."],
    expected: SUMMARY,
  });
  return { start_ms };
}

/** The floor: `layers` layers of `width` bare sessions at once, each layer after the one before. */
async function bareLayers(acp, agentCommand) {
  for (let layer = 0; layer < job.layers; layer++) {
    await Promise.all(Array.from({ length: job.width }, () => bareSession(acp, agentCommand)));
  }
}

async function main() {
  let pipelines;
  let agents;
  let profiles;
  let acp;
  let double;
  try {
    pipelines = await import("@icode/pipelines");
    agents = await import("@icode/workflow-agents/pipeline");
    profiles = await import("@icode/agent-profiles");
    acp = await import("@agentclientprotocol/sdk");
    double = await import("@icode/acp-agent-double");
  } catch (error) {
    return print({
      status: "unavailable",
      error: `cannot import @icode/pipelines, @icode/workflow-agents, the ACP SDK or the ACP agent double: ${error.message}`,
    });
  }
  for (const dir of [job.cwd, job.chrysHome, job.homeDir, job.runsDir]) mkdirSync(dir, { recursive: true });
  // The nodes' agent: a valid handoff through submit_handoff after `delay_ms`. The bare client's: the same
  // agent answering its one prompt after `delay_ms` (it has no handoff MCP server to call).
  const nodeScript = double.writeAgentScript(
    join(job.cwd, "node-script.json"),
    double.handoffScript("valid", { delayMs: job.delayMs, handoff: { summary: SUMMARY } }),
  );
  const bareScript = double.writeAgentScript(join(job.cwd, "bare-script.json"), {
    turns: [{ steps: [{ delay: job.delayMs }, { message: SUMMARY }] }],
  });
  const nodeCommand = double.agentCommand({ script: nodeScript });
  const bareCommand = double.agentCommand({ script: bareScript });
  const agentsDir = join(job.cwd, ".chrys", "agents");
  mkdirSync(agentsDir, { recursive: true });
  writeFileSync(
    join(agentsDir, "bench-pipeline-acp.yaml"),
    [
      `name: ${PROFILE}`,
      "acp:",
      `  command: ${JSON.stringify(nodeCommand.command)}`,
      `  args: ${JSON.stringify(nodeCommand.args)}`,
      "",
    ].join("\n"),
  );
  const env = nodeEnvironment(job.homeDir);
  const config = await profiles.loadAgentConfig({
    chrysHome: job.chrysHome,
    cwd: job.cwd,
    env,
    homeDir: job.homeDir,
  });
  const sqlite = pipelines.openSqlitePipelineStore({ chrysHome: job.chrysHome });
  const counts = new Map();
  const counting = { on: false };
  const store = countingStore(sqlite, counts, counting);
  const nodeCount = job.layers * job.width;
  let runs = 0;

  /** One run of the pipeline: create it, drive it, stop its sessions; resolves with what `checkRun` checks. */
  const runPipeline = async () => {
    runs += 1;
    const run = await sqlite.createRun({ definition_id: definitionId, task_input: "Do the task." });
    const executor = sessionPerNode(() =>
      agents.createPipelineNodeExecutor({ config, chrysHome: job.chrysHome, homeDir: job.homeDir }),
    );
    counts.clear();
    counting.on = true;
    const t0 = performance.now();
    let result;
    let driveMs = null;
    let stopMs = null;
    try {
      result = await pipelines.drivePipelineRun({
        store,
        runId: run.run_id,
        executor,
        owner: `bench-${process.pid}-${runs}`,
        runDir: join(job.runsDir, run.run_id),
        launchCwd: job.cwd,
        launchPermissionMode: "yolo",
        env,
      });
      driveMs = performance.now() - t0;
    } finally {
      counting.on = false;
      const s0 = performance.now();
      await executor.stopSessions(run.run_id);
      await executor.close();
      stopMs = performance.now() - s0;
    }
    const calls = Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]));
    const storeCalls = Object.values(calls).reduce((sum, c) => sum + c, 0);
    return {
      result,
      drive_ms: driveMs,
      stop_ms: stopMs,
      store_calls: storeCalls,
      calls,
      max_in_flight: executor.maxInFlight(),
    };
  };
  /** Untimed: the run succeeded with every node, each in one attempt. */
  const checkRun = async ({ result }) => {
    const succeeded = result.nodes.filter((n) => n.state === "succeeded").length;
    if (result.stop !== "converged" || result.run.state !== "succeeded" || succeeded !== nodeCount) {
      const failed = result.nodes.find((n) => n.state !== "succeeded");
      throw new Error(
        `the run stopped ${result.stop} in state ${result.run.state} with ${succeeded}/${nodeCount} nodes succeeded${failed ? ` (${failed.node_id}: ${failed.state} ${JSON.stringify(failed.error ?? null)})` : ""}`,
      );
    }
    const attempts = await sqlite.listAttempts(result.run.run_id);
    if (attempts.length !== nodeCount) throw new Error(`${attempts.length} attempts for ${nodeCount} nodes`);
  };

  let definitionId;
  try {
    const draft = await sqlite.createDefinition(
      layeredPipeline({ layers: job.layers, width: job.width, profile: PROFILE }),
    );
    await sqlite.publishDefinition(draft.id);
    definitionId = draft.id;
    const budgetMs = job.warmup.budget_ms;
    await warmUp({ runs: job.warmup.runs, budgetMs }, async () => checkRun(await runPipeline()));
    await warmUp({ runs: job.warmup.runs, budgetMs }, () => bareLayers(acp, bareCommand));
    const starts = [];
    const rounds = await measureRounds({
      rounds: job.rounds,
      subject: runPipeline,
      floor: () => bareLayers(acp, bareCommand),
      check: async (which, detail) => {
        if (which === "subject") return checkRun(detail);
        const solo = [];
        for (let i = 0; i < 3; i++) solo.push((await bareSession(acp, bareCommand)).start_ms);
        starts.push(median(solo));
      },
    });
    print({
      status: "ok",
      nodes: nodeCount,
      layers: job.layers,
      width: job.width,
      delay_ms: job.delayMs,
      rounds: rounds.map(({ subject_ms, subject_detail, floor_ms, subject_first }, i) => ({
        subject_ms,
        floor_ms,
        subject_first,
        drive_ms: subject_detail.drive_ms,
        stop_ms: subject_detail.stop_ms,
        store_calls: subject_detail.store_calls,
        calls: subject_detail.calls,
        max_in_flight: subject_detail.max_in_flight,
        session_start_ms: starts[i],
      })),
      node_max_rss_kib: process.resourceUsage().maxRSS,
    });
  } catch (error) {
    print({ status: "error", error: error instanceof Error ? error.message : String(error) });
  } finally {
    await sqlite.close();
  }
}

await main();
process.exit(0);
