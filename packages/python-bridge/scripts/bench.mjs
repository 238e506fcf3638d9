// Round-trip cost of the built bridge: `pnpm --filter @icode/python-bridge build && node scripts/bench.mjs [python]`.
// Prints the serial and pipelined cost per call of a sync node, an async node, and a sync node with a condition.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWorker } from "../dist/index.js";

const python =
  process.argv[2] ??
  execFileSync("python3", ["-c", "import os, sys; print(os.path.realpath(sys.executable))"], {
    encoding: "utf8",
  }).trim();
const dir = mkdtempSync(join(tmpdir(), "icode-bench-"));
writeFileSync(
  join(dir, "bench.py"),
  `from chrys.workflows import WorkflowBuilder
wf = WorkflowBuilder("Bench")
def sync_echo(value):
    return value
async def async_echo(value):
    return value
a = wf.python("sync", sync_echo)
b = wf.python("async", async_echo)
wf.edge(a, b, when=lambda v: True)
wf.start(a)
wf.output(a)
workflow = wf.build()
`,
);
const worker = await startWorker({ python, cwd: dir, cacheDir: join(tmpdir(), "icode-bench-pycache") });
await worker.load({ entry: join(dir, "bench.py"), packageDir: null });
const request = (node, conditions = null) => ({
  kind: "node",
  node,
  input: { text: "x", data: null },
  timeout_ms: 300_000,
  conditions,
  conditions_timeout_ms: null,
});
const cases = [
  ["sync node", request("sync")],
  ["async node", request("async")],
  ["sync node + condition", request("sync", { when: ["sync->async"], switch: null })],
];
const N = 5000;
for (const [name, req] of cases) {
  for (let i = 0; i < 500; i++) await worker.invoke(req);
  let start = performance.now();
  for (let i = 0; i < N; i++) await worker.invoke(req);
  const serial = ((performance.now() - start) / N) * 1000;
  start = performance.now();
  await Promise.all(Array.from({ length: N }, () => worker.invoke(req)));
  const pipelined = ((performance.now() - start) / N) * 1000;
  console.log(
    `${name.padEnd(24)} serial ${serial.toFixed(1).padStart(7)} µs   pipelined ${pipelined.toFixed(1).padStart(6)} µs`,
  );
}
await worker.close();
rmSync(dir, { recursive: true, force: true });
