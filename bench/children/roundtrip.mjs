// The raw round-trip floor: a Node parent and a Python child exchanging small JSON lines over pipes.
// Serial: send one line, wait for its answer, repeat. Pipelined: send every line at once (one write per line,
// as an engine dispatching many activations would), then wait for all answers.
// Both start with WARMUP serial exchanges that are not timed.
// Usage: node roundtrip.mjs <job.json>; job = { python, worker, messages, reps }. Prints one JSON line.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));

function startWorker() {
  const child = spawn(job.python, [job.worker], { stdio: ["pipe", "pipe", "inherit"] });
  let buffer = "";
  let waiters = [];
  const lines = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let at = buffer.indexOf("\n");
    while (at !== -1) {
      lines.push(JSON.parse(buffer.slice(0, at)));
      buffer = buffer.slice(at + 1);
      at = buffer.indexOf("\n");
    }
    const ready = waiters;
    waiters = [];
    for (const wake of ready) wake();
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  /** Resolves once at least `count` answers have arrived in total. */
  const received = (count) =>
    new Promise((resolve) => {
      const check = () => (lines.length >= count ? resolve() : waiters.push(check));
      check();
    });
  return { child, lines, received, exited };
}

function message(id) {
  return `${JSON.stringify({ id, value: { text: "hello", data: null } })}\n`;
}

async function serial(messages) {
  const worker = startWorker();
  await warm(worker);
  const t0 = performance.now();
  for (let i = 0; i < messages; i++) {
    worker.child.stdin.write(message(i));
    await worker.received(WARMUP + i + 1);
  }
  const elapsed = performance.now() - t0;
  check(worker.lines, messages);
  worker.child.stdin.end();
  await worker.exited;
  return (elapsed * 1000) / messages;
}

async function pipelined(messages) {
  const worker = startWorker();
  await warm(worker);
  const t0 = performance.now();
  for (let i = 0; i < messages; i++) worker.child.stdin.write(message(i));
  await worker.received(WARMUP + messages);
  const elapsed = performance.now() - t0;
  check(worker.lines, messages);
  worker.child.stdin.end();
  await worker.exited;
  return (elapsed * 1000) / messages;
}

/** Serial exchanges before timing, so that both processes are past their start-up (imports, JIT, caches). */
const WARMUP = 1000;

async function warm(worker) {
  for (let i = 0; i < WARMUP; i++) {
    worker.child.stdin.write(message(-1 - i));
    await worker.received(i + 1);
  }
}

function check(lines, messages) {
  if (lines.length !== WARMUP + messages) {
    throw new Error(`round trip: ${lines.length} answers, expected ${WARMUP + messages}`);
  }
  for (let i = 0; i < messages; i++) {
    const got = lines[WARMUP + i].id;
    if (got !== i) throw new Error(`round trip: answer ${i} has id ${got}, expected ${i}`);
  }
}

const serialUs = [];
const pipelinedUs = [];
for (let rep = 0; rep < job.reps; rep++) {
  serialUs.push(await serial(job.messages));
  pipelinedUs.push(await pipelined(job.messages));
}
process.stdout.write(`${JSON.stringify({ serial_us: serialUs, pipelined_us: pipelinedUs })}\n`);
