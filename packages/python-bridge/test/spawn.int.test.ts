import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleForNode, processRunning, waitUntil } from "@icode/test-utils";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { adoptWorker, type SpawnedWorker, sdkRoot, spawnWorker } from "../src/index";
import { node, python, workerEnv, workflowSource, workspace } from "./helpers";

const packageDir = join(fileURLToPath(new URL(".", import.meta.url)), "..");

/** Every worker spawned here is ended after its test, adopted or not, so a failure leaves no process behind. */
const spawned: SpawnedWorker[] = [];
afterEach(async () => {
  for (const worker of spawned.splice(0)) {
    const { child } = worker;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    }
  }
});

function spawnIn(ws: ReturnType<typeof workspace>, options: { python?: string; sdkRoot?: string } = {}) {
  const worker = spawnWorker({
    python: options.python ?? python(),
    cwd: ws.dir,
    cacheDir: ws.cache,
    env: workerEnv(),
    loadOnly: false,
    ...(options.sdkRoot === undefined ? {} : { sdkRoot: options.sdkRoot }),
  });
  spawned.push(worker);
  return worker;
}

/** Resolves with how `child` ended (at once when it already has). */
function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
}

const delay = (ms: number) => new Promise((done) => setTimeout(done, ms));

const ECHO = workflowSource(
  'def echo(value):\n    return value\n\nn = wf.python("echo", echo)\nwf.start(n)\nwf.output(n)',
);

describe("adopting a worker spawned earlier", () => {
  test("its hello waits in the pipe until it is adopted; it then loads and invokes", async () => {
    const ws = workspace({ "echo.py": ECHO });
    const early = spawnIn(ws);
    expect(early.taken).toBe(false);
    expect(early.options).toEqual({ cwd: ws.dir, cacheDir: ws.cache, loadOnly: false });
    // Long enough for the worker to have written hello (and to wait for an answer) before anyone reads it.
    await delay(700);
    expect(early.child.exitCode).toBeNull();
    const worker = await adoptWorker(early);
    try {
      expect(early.taken).toBe(true);
      expect(worker.pid).toBe(early.child.pid);
      expect(worker.hello).toMatchObject({ pid: early.child.pid, pycache_prefix: ws.cache });
      expect((await worker.load({ entry: ws.path("echo.py"), packageDir: null })).ok).toBe(true);
      expect(await worker.invoke(node("echo", "hi"))).toMatchObject({
        ok: true,
        value: { text: "hi", data: null },
      });
    } finally {
      await worker.close();
    }
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });

  test("a binary that does not exist rejects with worker_failed, adopted before or after Node noticed", async () => {
    const ws = workspace();
    const missing = ws.path("no-such-python");

    const late = spawnIn(ws, { python: missing });
    expect(await waitUntil(() => late.error !== null, 5_000)).toBe(true);
    expect(late.error).toMatchObject({ code: "ENOENT" });
    await expect(adoptWorker(late)).rejects.toMatchObject({
      code: "worker_failed",
      message: expect.stringMatching(/could not be started: .*ENOENT/),
    });

    const prompt = spawnIn(ws, { python: missing });
    expect(prompt.error).toBeNull(); // Node reports the failure on a later tick
    await expect(adoptWorker(prompt)).rejects.toMatchObject({
      code: "worker_failed",
      message: expect.stringMatching(/could not be started: .*ENOENT/),
    });
  });

  test("a process that exited before it was adopted rejects with its exit and its stderr", async () => {
    const root = workspace();
    // Not the worker: a `_worker.py` that complains and exits at once, run by the real interpreter.
    root.write(
      "sdk/chrys/workflows/_worker.py",
      'import sys\nsys.stderr.write("not the worker\\n")\nsys.exit(3)\n',
    );
    const early = spawnIn(root, { sdkRoot: root.path("sdk") });
    expect(await exitOf(early.child)).toEqual({ code: 3, signal: null });
    expect(early.taken).toBe(false);
    const adopting = adoptWorker(early, 5_000);
    await expect(adopting).rejects.toMatchObject({ code: "worker_failed" });
    await expect(adopting).rejects.toThrow(/exited with code 3 before saying hello:\nnot the worker/);
  });

  test("a process is adopted once: a second claim or adoption throws", async () => {
    const ws = workspace();
    const early = spawnIn(ws);
    const worker = await adoptWorker(early);
    try {
      expect(() => early.claim()).toThrow(/already adopted or discarded/);
      await expect(adoptWorker(early)).rejects.toThrow(/already adopted or discarded/);
      early.discard(); // does nothing once adopted
      expect(worker.alive).toBe(true);
      expect(early.child.signalCode).toBeNull();
    } finally {
      await worker.close();
    }
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });

  test("discard kills the process; it can then not be adopted", async () => {
    const ws = workspace();
    const early = spawnIn(ws);
    const exited = exitOf(early.child);
    early.discard();
    expect(early.taken).toBe(true);
    expect(await exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(() => early.claim()).toThrow(/already adopted or discarded/);
    await expect(adoptWorker(early)).rejects.toThrow(/already adopted or discarded/);
    early.discard(); // a second discard does nothing
  });
});

describe("a worker that is never adopted", () => {
  let bundleDir: string;
  let script: string;
  beforeAll(async () => {
    bundleDir = mkdtempSync(join(tmpdir(), "icode-bridge-bundle-"));
    script = await bundleForNode(join(packageDir, "test", "support", "spawn-and-return.ts"), bundleDir);
  });
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

  test("does not keep Node running, and ends with it", async () => {
    expect(existsSync(script)).toBe(true);
    const ws = workspace();
    const child = spawn(process.execPath, [script, python(), ws.dir, ws.cache, sdkRoot()], {
      env: workerEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = exitOf(child);
    // A Node held open by the worker would wait for it forever (the worker waits for messages).
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const exit = await exited;
    clearTimeout(timer);
    expect({ exit, stderr }).toEqual({ exit: { code: 0, signal: null }, stderr: "" });
    const pid = Number(stdout.trim());
    expect(Number.isInteger(pid) && pid > 0).toBe(true);
    // Its input pipe closed with Node: the worker notices and exits.
    const gone = await waitUntil(() => !processRunning(pid), 10_000);
    if (!gone) process.kill(pid, "SIGKILL");
    expect(gone).toBe(true);
  });
});
