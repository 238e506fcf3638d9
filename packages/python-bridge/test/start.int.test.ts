import { chmodSync } from "node:fs";
import { expect, test } from "vitest";
import { PROTOCOL_VERSION, startWorker } from "../src/index";
import { node, python, start, workerEnv, workflowSource, workspace } from "./helpers";

test("hello describes the interpreter; the worker runs in the workspace", async () => {
  const ws = workspace();
  const worker = await start(ws);
  expect(worker.hello).toMatchObject({
    type: "hello",
    protocol: PROTOCOL_VERSION,
    pid: worker.pid,
    python: { executable: python(), implementation: "cpython" },
    pycache_prefix: ws.cache,
  });
  expect(worker.hello.python.version).toBe(worker.hello.python.version_info.join("."));
  expect(worker.hello.python.platform).toBe(process.platform === "darwin" ? "darwin" : "linux");
});

function script(ws: ReturnType<typeof workspace>, name: string, body: string): string {
  const path = ws.write(name, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

test("a binary that does not exist rejects with worker_failed", async () => {
  const ws = workspace();
  await expect(
    startWorker({ python: ws.path("no-such-python"), cwd: ws.dir, cacheDir: ws.cache }),
  ).rejects.toMatchObject({
    code: "worker_failed",
    message: expect.stringContaining("ENOENT"),
  });
});

test("a process that exits before hello rejects with worker_failed carrying its stderr", async () => {
  const ws = workspace();
  const fake = script(ws, "fake-python", 'echo "this is not python" >&2\nexit 3');
  const failure = startWorker({ python: fake, cwd: ws.dir, cacheDir: ws.cache });
  await expect(failure).rejects.toMatchObject({ code: "worker_failed" });
  await expect(failure).rejects.toThrow(/exited with code 3 before saying hello:\nthis is not python/);
});

test("a process that never says hello is killed after startTimeoutMs", async () => {
  const ws = workspace();
  const silent = script(ws, "silent-python", "exec sleep 30");
  const started = Date.now();
  await expect(
    startWorker({ python: silent, cwd: ws.dir, cacheDir: ws.cache, startTimeoutMs: 300 }),
  ).rejects.toThrow(/did not say hello within 0.3 s/);
  expect(Date.now() - started).toBeLessThan(3_000);
});

test("a wrapper that starts Python with -E (ignoring PYTHONPYCACHEPREFIX) is refused", async () => {
  const ws = workspace();
  const wrapper = script(ws, "isolated-python", `exec "${python()}" -E "$@"`);
  await expect(
    startWorker({ python: wrapper, cwd: ws.dir, cacheDir: ws.cache, env: workerEnv() }),
  ).rejects.toMatchObject({
    code: "worker_failed",
    message: expect.stringContaining("ignores PYTHONPYCACHEPREFIX"),
    hint: expect.stringContaining("-E or -I"),
  });
});

test("a process that speaks another protocol is refused", async () => {
  const ws = workspace();
  const other = script(ws, "other-python", `echo '{"type":"hello","protocol":99}' >&4\nexec sleep 30`);
  const started = Date.now();
  await expect(startWorker({ python: other, cwd: ws.dir, cacheDir: ws.cache })).rejects.toMatchObject({
    code: "worker_failed",
    message: expect.stringContaining(`does not speak protocol ${PROTOCOL_VERSION}`),
  });
  expect(Date.now() - started).toBeLessThan(5_000);
});

test("close() ends the worker; calls after it reject with worker_closed", async () => {
  const ws = workspace({ "echo.py": "" });
  const worker = await start(ws);
  await worker.close();
  expect(worker.alive).toBe(false);
  expect(await worker.exited).toEqual({ code: 0, signal: null });
  expect((await worker.load({ entry: ws.path("echo.py"), packageDir: null })).ok).toBe(false);
});

test("a worker started to only load still answers calls, and closes right after its load", async () => {
  const ws = workspace({
    "echo.py": workflowSource(
      'def echo(value):\n    return value\n\nn = wf.python("echo", echo)\nwf.start(n)\nwf.output(n)',
    ),
  });
  const validating = await start(ws, { loadOnly: true });
  expect((await validating.load({ entry: ws.path("echo.py"), packageDir: null })).ok).toBe(true);
  await validating.close();
  expect(await validating.exited).toEqual({ code: 0, signal: null });

  const calling = await start(ws, { loadOnly: true });
  expect((await calling.load({ entry: ws.path("echo.py"), packageDir: null })).ok).toBe(true);
  expect(await calling.invoke(node("echo", "hi"))).toMatchObject({
    ok: true,
    value: { text: "hi", data: null },
  });
});
