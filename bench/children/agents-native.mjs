// Native agent nodes against a bare AI SDK loop making the same requests, in one process, against the
// model-provider double running in a process of its own (TCP_NODELAY, a backlog of 511, one write per
// reply). One engine (`maxConcurrentAgents: concurrency`) measures every row of `job.rows`, one after the
// other, each with a model profile of its own (`agent(model=)`: the wire and streaming of the row):
//   chain:    createEngine().run() of a chain of `n` agent nodes, next to `n` sequential generateText (or
//             streamText) calls, each sending the previous reply, as the chain does;
//   parallel: `n` agent nodes between two Python nodes, `concurrency` at a time, next to `n` requests made
//             by `concurrency` concurrent callers.
// Before measuring a row, a shape check runs it (at 2 or 3 nodes) through the engine and the bare loop
// against an in-process double and compares what they sent (method, path, headers, body): the floor must
// make the same requests. Every measured sample is checked too: the engine's outcome and output, the bare
// loop's replies, and the number of requests the provider answered (its `GET /_double/stats`); the most
// agent attempts (engine) and requests (bare loop) in flight at once are reported. Both sides warm up on the
// same shape at `warmup.n` nodes first.
// Usage: node agents-native.mjs <job.json>. Prints one JSON line:
// { status: "ok", rows: { <key>: { status: "ok", rounds, … } | { status: "error", error } } } or
// { status: "unavailable" | "error", error }.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import {
  agentChainSource,
  agentFanoutSource,
  MAX_OUTPUT_TOKENS,
  MODEL_ID,
  modelProfileYaml,
  NATIVE_INSTRUCTIONS,
  nativeProfileYaml,
  writeAgentProject,
} from "../lib/agent-workflows.mjs";
import { checkRunResult } from "../lib/check.mjs";
import { measureRounds } from "../lib/rounds.mjs";
import { warmUp } from "../lib/warmup.mjs";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));

function print(report) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

function message(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Starts the provider double's CLI and resolves with the URLs of its first stdout line; it is stopped when
 * this process exits.
 */
function startProviderProcess(cli) {
  const child = spawn(process.execPath, [cli, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  // However this process ends (a failure included), the provider ends with it.
  process.once("exit", () => child.kill("SIGTERM"));
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      lines.close();
      try {
        resolve({ ...JSON.parse(line), child });
      } catch (error) {
        reject(new Error(`the provider double printed ${JSON.stringify(line)}: ${error.message}`));
      }
    });
    child.once("exit", (code) => reject(new Error(`the provider double exited (${code}): ${stderr.trim()}`)));
  });
}

async function stats(url) {
  return (await fetch(`${url}/_double/stats`)).json();
}

async function reset(url) {
  await (await fetch(`${url}/_double/reset`, { method: "POST" })).arrayBuffer();
}

/** What a request looked like on the wire, for the shape check (the port-bearing `host` aside). */
function wireShape(request) {
  const { host: _host, ...headers } = request.headers;
  return JSON.stringify({ method: request.method, path: request.path, headers, body: request.body });
}

/** The bare side of one row: the same provider package and settings the engine's native runtime uses. */
class BareLoop {
  constructor(sdk, row) {
    this.sdk = sdk;
    this.row = row;
  }

  model(urls) {
    if (this.row.wire === "anthropic") {
      return this.sdk.createAnthropic({ baseURL: urls.anthropicBaseUrl, apiKey: job.key })(MODEL_ID);
    }
    const openai = this.sdk.createOpenAICompatible({
      name: "openai",
      baseURL: urls.openaiBaseUrl,
      apiKey: job.key,
      includeUsage: true,
    });
    return openai.chatModel(MODEL_ID);
  }

  /** One model request as a bare caller makes it; resolves with the reply's text. */
  async request(model, text) {
    const request = {
      model,
      system: NATIVE_INSTRUCTIONS,
      messages: [{ role: "user", content: text }],
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      maxRetries: 0,
    };
    if (!this.row.stream) return (await this.sdk.generateText(request)).text;
    let reply = "";
    for await (const part of this.sdk.streamText(request).fullStream) {
      if (part.type === "text-delta") reply += part.text;
      else if (part.type === "error") throw part.error;
    }
    return reply;
  }

  /**
   * `n` requests, as a chain (each sends the previous reply) or by `concurrency` callers, each reply
   * checked. Resolves with `{ most }`, the most requests in flight at once.
   */
  async run(model, n, expected) {
    const checked = (reply) => {
      if (reply !== expected) {
        throw new Error(`the bare loop got ${JSON.stringify(reply)}, expected ${JSON.stringify(expected)}`);
      }
      return reply;
    };
    if (this.row.mode === "chain") {
      let text = job.input;
      for (let i = 0; i < n; i++) text = checked(await this.request(model, text));
      return { most: 1 };
    }
    let next = 0;
    let running = 0;
    let most = 0;
    const caller = async () => {
      while (next < n) {
        next += 1;
        most = Math.max(most, ++running);
        checked(await this.request(model, job.input));
        running--;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.row.concurrency, n) }, caller));
    return { most };
  }
}

/** The sizes and ids of one row's workflows and model profiles. */
function plan(row) {
  const source = row.mode === "chain" ? agentChainSource : agentFanoutSource;
  const at = (n, model) => ({ id: `${row.key}-${n}-${model}`, n, source: source(n, { model }) });
  return {
    measured: at(row.n, `bench-${row.key}`),
    warm: at(Math.min(row.n, job.warmup.n), `bench-${row.key}`),
    check: at(row.mode === "chain" ? 2 : Math.min(row.n, 3), `check-${row.key}`),
  };
}

async function main() {
  let createEngine;
  let double;
  const sdk = {};
  try {
    ({ createEngine } = await import("@icode/workflow-engine"));
    double = await import("@icode/model-provider-double");
    Object.assign(
      sdk,
      await import("ai"),
      await import("@ai-sdk/openai-compatible"),
      await import("@ai-sdk/anthropic"),
    );
  } catch (error) {
    return print({
      status: "unavailable",
      error: `cannot import the engine, the provider double or the AI SDK: ${message(error)}`,
    });
  }
  const reply = double.DEFAULT_REPLY.text;
  const provider = await startProviderProcess(double.PROVIDER_DOUBLE_CLI);
  const checkDouble = await double.startProviderDouble();
  const baseUrl = (row, urls) => (row.wire === "anthropic" ? urls.url : urls.openaiBaseUrl);
  const plans = new Map(job.rows.map((row) => [row.key, plan(row)]));
  writeAgentProject({
    project: job.cwd,
    chrysHome: job.chrysHome,
    workflows: [...plans.values()].flatMap((p) => [p.measured, p.warm, p.check].map((w) => [w.id, w.source])),
    agents: [["bench", nativeProfileYaml()]],
    models: job.rows.flatMap((row) =>
      [
        [`bench-${row.key}`, provider],
        [`check-${row.key}`, checkDouble],
      ].map(([id, urls]) => ({
        id,
        yaml: modelProfileYaml({
          id,
          name: id,
          provider: row.wire,
          baseUrl: baseUrl(row, urls),
          stream: row.stream,
        }),
      })),
    ),
  });
  const engine = createEngine({
    cwd: job.cwd,
    env: { ...process.env, CHRYS_HOME: job.chrysHome, BENCH_MODEL_KEY: job.key },
    homeDir: job.homeDir,
    maxConcurrentAgents: job.concurrency,
  });

  /** Runs a workflow; resolves with when its first node started and the most agent attempts in flight. */
  const runEngine = async (row, w) => {
    const t0 = performance.now();
    const run = engine.run({ workflowId: w.id, input: job.input, trust: true });
    let started = null;
    let running = 0;
    let most = 0;
    run.events.on("event", (e) => {
      if (e.type === "node_started") started ??= performance.now() - t0;
      if (!/^a\d/.test(e.node_id ?? "")) return;
      if (e.type === "attempt_started") most = Math.max(most, ++running);
      else if (e.type === "node_completed" || e.type === "attempt_failed") running--;
    });
    const result = await run.result;
    const expect =
      row.mode === "chain" ? { kind: "echo", text: reply } : { kind: "fanout", n: w.n, first: "a0" };
    checkRunResult(result, expect);
    return { started, most };
  };

  /** One row: the shape check, the warm-up, then the rounds. */
  const measureRow = async (row) => {
    const p = plans.get(row.key);
    const bare = new BareLoop(sdk, row);
    checkDouble.reset();
    await runEngine(row, p.check);
    const fromEngine = checkDouble.requests.map(wireShape).sort();
    checkDouble.reset();
    await bare.run(bare.model(checkDouble), p.check.n, reply);
    const fromFloor = checkDouble.requests.map(wireShape).sort();
    if (fromEngine.length !== p.check.n || JSON.stringify(fromEngine) !== JSON.stringify(fromFloor)) {
      throw new Error(
        `the bare loop does not make the engine's requests: engine [${fromEngine.join(", ")}], bare [${fromFloor.join(", ")}]`,
      );
    }

    const model = bare.model(provider);
    // Trusting loads the workflow (and fills the compiled-Python cache), so that the rounds do not pay for
    // it; a warm-up on the measured workflow itself does the same.
    if (p.warm.id !== p.measured.id) await engine.trust(p.measured.id);
    const budgetMs = job.warmup.budget_ms;
    await warmUp({ runs: job.warmup.runs, budgetMs }, () => runEngine(row, p.warm));
    await warmUp({ runs: job.warmup.runs, budgetMs }, () => bare.run(model, p.warm.n, reply));
    await reset(provider.url);
    const firstNode = [];
    const inFlight = { subject: 0, floor: 0 };
    const rounds = await measureRounds({
      rounds: job.rounds,
      subject: () => runEngine(row, p.measured),
      floor: () => bare.run(model, row.n, reply),
      check: async (which, detail) => {
        const seen = await stats(provider.url);
        if (seen.requests !== row.n) {
          const who = which === "subject" ? "the engine" : "the bare loop";
          throw new Error(`${who} made ${seen.requests} requests, expected ${row.n}`);
        }
        if (which === "subject") firstNode.push(detail.started);
        inFlight[which] = Math.max(inFlight[which], detail.most);
        await reset(provider.url);
      },
    });
    return {
      status: "ok",
      rounds: rounds.map(({ subject_ms, floor_ms, subject_first }) => ({
        subject_ms,
        floor_ms,
        subject_first,
      })),
      requests: row.n,
      shape: "same",
      to_first_node_ms: firstNode,
      max_in_flight: inFlight,
    };
  };

  const rows = {};
  try {
    for (const row of job.rows) {
      try {
        rows[row.key] = await measureRow(row);
      } catch (error) {
        rows[row.key] = { status: "error", error: message(error) };
      }
    }
    print({ status: "ok", rows, node_max_rss_kib: process.resourceUsage().maxRSS });
  } catch (error) {
    print({ status: "error", error: message(error) });
  } finally {
    await engine.close();
    await checkDouble.close();
  }
}

await main();
process.exit(0);
