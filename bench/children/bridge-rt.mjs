// The cost of one call through the Python bridge against the raw pipe round trip, side by side in one process.
//
// Starts the raw echo worker of the round-trip floor (python/echo_worker.py, driven the way roundtrip.mjs
// drives it) and, for each bridge build measured, a real worker through the bridge's public API
// (`startWorker`, `load`, `invoke`) on a generated workflow with one trivial sync node, `def n(v): return v`.
// Each call is made as the engine makes it (python-executor.ts): `kind: "node"`, no conditions, `timeout_ms`
// 300,000 (the default node timeout), `conditions_timeout_ms` 30,000, an `AbortSignal` of its own, `onEmit`
// and `onAsk` callbacks (`--bare`: the same request without options, which leaves out the caller's own cost
// of a new `AbortController` and two closures per call).
// Serial: one call at a time. Pipelined: `--pipelined` calls sent at once, then all awaited. Every round
// measures the raw worker and each build in turn, serial then pipelined, on the same warm processes; the
// medians over the rounds are printed with the ratios to the raw figures of the same run.
//
// Measures *built* bridges (each with the SDK copy it ships): `pnpm --filter @icode/python-bridge build` first.
// Usage: node bench/children/bridge-rt.mjs [--python PATH] [--rounds 7] [--serial 3000] [--pipelined 1000]
//        [--bridge DIST/index.js]... [--bare] [--json]
// --bridge (repeatable) measures the given builds, for example a saved copy of the package (with its
// node_modules) next to the current one, instead of packages/python-bridge/dist alone; --json prints one JSON
// line instead of the table.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    python: { type: "string" },
    rounds: { type: "string", default: "7" },
    serial: { type: "string", default: "3000" },
    pipelined: { type: "string", default: "1000" },
    bridge: { type: "string", multiple: true },
    bare: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(args.rounds);
const SERIAL = Number(args.serial);
const PIPELINED = Number(args.pipelined);
const WARMUP = 1000;
const python =
  args.python ??
  execFileSync("python3", ["-c", "import os, sys; print(os.path.realpath(sys.executable))"], {
    encoding: "utf8",
  }).trim();

const builds = args.bridge ?? [join(here, "..", "..", "packages", "python-bridge", "dist", "index.js")];
const bridges = [];
for (const path of builds) {
  try {
    bridges.push({ path, api: await import(pathToFileURL(resolve(path)).href) });
  } catch (error) {
    process.stderr.write(
      `cannot import the built bridge ${path} (${error.message}); run pnpm --filter @icode/python-bridge build\n`,
    );
    process.exit(1);
  }
}

// --- the raw echo worker (as in roundtrip.mjs) ---------------------------------------------------------------

function startRaw() {
  const child = spawn(python, [join(here, "..", "python", "echo_worker.py")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let buffer = "";
  let count = 0;
  let waiter = null;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let at = buffer.indexOf("\n");
    while (at !== -1) {
      const line = JSON.parse(buffer.slice(0, at));
      if (line.id !== count) throw new Error(`raw: answer ${count} has id ${line.id}`);
      count++;
      buffer = buffer.slice(at + 1);
      at = buffer.indexOf("\n");
    }
    if (waiter !== null && count >= waiter.count) {
      const { wake } = waiter;
      waiter = null;
      wake();
    }
  });
  let sent = 0;
  const send = () =>
    child.stdin.write(`${JSON.stringify({ id: sent++, value: { text: "x", data: null } })}\n`);
  const received = (target) =>
    count >= target ? Promise.resolve() : new Promise((wake) => (waiter = { count: target, wake }));
  return {
    async serial(n) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        send();
        await received(sent);
      }
      return ((performance.now() - t0) * 1000) / n;
    },
    async pipelined(n) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) send();
      await received(sent);
      return ((performance.now() - t0) * 1000) / n;
    },
    close() {
      child.stdin.end();
      return new Promise((done) => child.on("exit", done));
    },
  };
}

// --- a real worker through a bridge build --------------------------------------------------------------------

async function startBridge(api, dir) {
  const entry = join(dir, "rt.py");
  writeFileSync(
    entry,
    `from chrys.workflows import WorkflowBuilder
wf = WorkflowBuilder("Bridge round trip")
def n(v):
    return v
node = wf.python("n", n)
wf.start(node)
wf.output(node)
workflow = wf.build()
`,
  );
  const worker = await api.startWorker({ python, cwd: dir, cacheDir: join(tmpdir(), "icode-bench-pycache") });
  const loaded = await worker.load({ entry, packageDir: null });
  if (!loaded.ok) throw new Error(`load failed: ${JSON.stringify(loaded.diagnostics)}`);
  const request = {
    kind: "node",
    node: "n",
    input: { text: "x", data: null },
    timeout_ms: 300_000,
    conditions: null,
    conditions_timeout_ms: 30_000,
  };
  const call = async () => {
    const outcome = await worker.invoke(
      request,
      args.bare
        ? undefined
        : { signal: new AbortController().signal, onEmit: () => {}, onAsk: async () => null },
    );
    if (!outcome.ok || outcome.value.text !== "x") throw new Error(`bridge: ${JSON.stringify(outcome)}`);
  };
  return {
    async serial(n) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await call();
      return ((performance.now() - t0) * 1000) / n;
    },
    async pipelined(n) {
      const t0 = performance.now();
      const calls = [];
      for (let i = 0; i < n; i++) calls.push(call());
      await Promise.all(calls);
      return ((performance.now() - t0) * 1000) / n;
    },
    close: () => worker.close(),
  };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const dir = mkdtempSync(join(tmpdir(), "icode-bridge-rt-"));
try {
  const subjects = [{ name: "raw", worker: startRaw() }];
  for (const [index, { api }] of bridges.entries()) {
    subjects.push({
      name: bridges.length > 1 ? `bridge ${index + 1}` : "bridge",
      worker: await startBridge(api, dir),
    });
  }
  for (const { worker } of subjects) {
    await worker.serial(WARMUP);
    await worker.pipelined(PIPELINED);
  }
  const figures = Object.fromEntries(subjects.map(({ name }) => [name, { serial: [], pipelined: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const { name, worker } of subjects) figures[name].serial.push(await worker.serial(SERIAL));
    for (const { name, worker } of subjects) figures[name].pipelined.push(await worker.pipelined(PIPELINED));
  }
  for (const { worker } of subjects) await worker.close();
  const medians = Object.fromEntries(
    Object.entries(figures).map(([name, f]) => [
      name,
      { serial: median(f.serial), pipelined: median(f.pipelined) },
    ]),
  );
  const ratio = (name, mode) => medians[name][mode] / medians.raw[mode];
  if (args.json) {
    const report = { python, rounds: ROUNDS, bare: args.bare, builds, medians_us: medians, figures };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else {
    const us = (value) => `${value.toFixed(1).padStart(7)} µs`;
    const lines = [`${python}, ${ROUNDS} rounds, medians per call${args.bare ? " (--bare)" : ""}`];
    if (bridges.length > 1)
      for (const [i, { path }] of bridges.entries()) lines.push(`bridge ${i + 1}: ${path}`);
    lines.push(`${"".padEnd(10)} ${"serial".padStart(10)}  ratio   ${"pipelined".padStart(10)}  ratio`);
    for (const { name } of subjects) {
      const m = medians[name];
      lines.push(
        `${name.padEnd(10)} ${us(m.serial)}  ${ratio(name, "serial").toFixed(2)}×  ${us(m.pipelined)}  ${ratio(name, "pipelined").toFixed(2)}×`,
      );
    }
    lines.push(`(serial: ${SERIAL} calls one at a time; pipelined: ${PIPELINED} calls in flight)`);
    process.stdout.write(`${lines.join("\n")}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
