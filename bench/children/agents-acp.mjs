// ACP agent nodes against a bare ACP SDK client running the same agent command, in one process:
//   subject: createEngine().run() of a chain of `n` ACP agent nodes (the scripted ACP agent double; each node
//            spawns it, `initialize`, `session/new`, one `session/prompt`, then stops it), timed from the
//            first node's start to the last node's end (its events): the cost of `n` nodes, without the
//            run's own setup and finish (worker start, loading the workflow, records), reported beside it;
//   floor:   `n` sessions of a bare client (`client()` of @agentclientprotocol/sdk over the child's stdio):
//            spawn the same command with the same environment, `initialize`, `session/new`, one prompt,
//            close stdin and wait for the exit; each prompt sends the previous answer, as the chain does.
// Beside them, per round: the interpreter's start (`node -e 0`, the agent double being a Node program) and
// the bare client's warm turn (`warm_turns` more prompts on one open session, after its first), which the
// engine cannot be compared with yet: workflow agent nodes do not reuse sessions.
// Usage: node agents-acp.mjs <job.json>. Prints one JSON line: { status: "ok" | "unavailable" | "error", … }.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { acpChainSource, acpProfileYaml, writeAgentProject } from "../lib/agent-workflows.mjs";
import { bareAcpSession, exitOf } from "../lib/bare-acp.mjs";
import { checkRunResult } from "../lib/check.mjs";
import { measureRounds } from "../lib/rounds.mjs";
import { median } from "../lib/stats.mjs";
import { warmUp } from "../lib/warmup.mjs";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
/** What the scripted agent answers every prompt with. */
const ANSWER = "done";

function print(report) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

/**
 * The environment the engine gives an ACP child (agent-profiles.md 2.8: the base variables that are set,
 * the profile's `env`, `CHRYS_ACP_SUBAGENT_DEPTH=1` for a workflow node), so that both sides start the agent
 * alike.
 */
function agentEnvironment(env) {
  const out = {};
  for (const name of ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]) {
    if (env[name] !== undefined) out[name] = env[name];
  }
  out.CHRYS_ACP_SUBAGENT_DEPTH = "1";
  return out;
}

/** Time to start and end `node -e 0`, the interpreter the agent double runs on. */
async function nodeStart() {
  const t0 = performance.now();
  const code = await exitOf(spawn(process.execPath, ["-e", "0"], { stdio: "ignore" }));
  if (code !== 0) throw new Error(`node -e 0 exited with ${code}`);
  return performance.now() - t0;
}

/** A bare client session: spawn, `initialize`, `session/new`, then `texts` as prompts, and stop. */
function bareSession(acp, agentCommand, texts, { timeTurns = false } = {}) {
  return bareAcpSession(acp, agentCommand, {
    cwd: job.cwd,
    env: agentEnvironment(process.env),
    texts,
    expected: ANSWER,
    timeTurns,
  });
}

/** The floor of a chain of `n` ACP nodes: `n` bare sessions, each prompting with the previous answer. */
async function bareChain(acp, agentCommand, n) {
  let text = job.input;
  for (let i = 0; i < n; i++) [text] = (await bareSession(acp, agentCommand, [text])).answers;
}

async function main() {
  let createEngine;
  let acp;
  let double;
  try {
    ({ createEngine } = await import("@icode/workflow-engine"));
    acp = await import("@agentclientprotocol/sdk");
    double = await import("@icode/acp-agent-double");
  } catch (error) {
    return print({
      status: "unavailable",
      error: `cannot import the engine, the ACP SDK or the ACP agent double: ${error.message}`,
    });
  }
  mkdirSync(job.cwd, { recursive: true });
  const script = double.writeAgentScript(join(job.cwd, "agent-script.json"), {
    turns: [{ steps: [{ message: ANSWER }] }],
  });
  const agentCommand = double.agentCommand({ script });
  const workflowId = `acp-chain-${job.n}`;
  writeAgentProject({
    project: job.cwd,
    chrysHome: job.chrysHome,
    workflows: [[workflowId, acpChainSource(job.n)]],
    agents: [["bench-acp", acpProfileYaml(agentCommand)]],
  });
  const engine = createEngine({
    cwd: job.cwd,
    env: { ...process.env, CHRYS_HOME: job.chrysHome },
    homeDir: job.homeDir,
  });
  /** Runs the chain; resolves with the span of its nodes: from the first one's start to the last one's end. */
  const runEngine = async () => {
    const t0 = performance.now();
    const run = engine.run({ workflowId, input: job.input, trust: true });
    let first = null;
    let last = null;
    run.events.on("event", (e) => {
      if (e.type === "node_started") first ??= performance.now();
      else if (e.type === "node_completed") last = performance.now();
    });
    const result = await run.result;
    const run_ms = performance.now() - t0;
    checkRunResult(result, { kind: "echo", text: ANSWER });
    if (first === null || last === null)
      throw new Error("the run reported no node_started or node_completed");
    return { span_ms: last - first, run_ms };
  };
  try {
    await engine.trust(workflowId);
    const budgetMs = job.warmup.budget_ms;
    await warmUp({ runs: job.warmup.runs, budgetMs }, runEngine);
    await warmUp({ runs: job.warmup.runs, budgetMs }, () => bareChain(acp, agentCommand, job.n));
    const nodeStarts = [];
    const warmTurns = [];
    const rounds = await measureRounds({
      rounds: job.rounds,
      subject: runEngine,
      floor: () => bareChain(acp, agentCommand, job.n),
      check: async (which) => {
        if (which !== "floor") return;
        // Beside the floor, untimed by the round: the interpreter's start, and warm turns on one session.
        const starts = [];
        for (let i = 0; i < 3; i++) starts.push(await nodeStart());
        nodeStarts.push(median(starts));
        const texts = Array.from({ length: job.warmTurns + 1 }, () => ANSWER);
        const { turns } = await bareSession(acp, agentCommand, texts, { timeTurns: true });
        warmTurns.push(median(turns.slice(1)));
      },
    });
    // A round's subject is the span of the chain's nodes; the whole run (its setup and finish too) beside it.
    print({
      status: "ok",
      rounds: rounds.map(({ subject_detail, floor_ms, subject_first }) => ({
        subject_ms: subject_detail.span_ms,
        run_ms: subject_detail.run_ms,
        floor_ms,
        subject_first,
      })),
      nodes: job.n,
      node_start_ms: nodeStarts,
      warm_turn_ms: warmTurns,
      node_max_rss_kib: process.resourceUsage().maxRSS,
    });
  } catch (error) {
    print({ status: "error", error: error instanceof Error ? error.message : String(error) });
  } finally {
    await engine.close();
  }
}

await main();
process.exit(0);
