import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { expect, test } from "vitest";
import { PROTOCOL_VERSION, startWorker, type WorkerWarning } from "../src/index";
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

/** The compiled files under `dir` whose name starts with `name.` (`typing.cpython-311.pyc`). */
function compiled(dir: string, name: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => basename(file).startsWith(`${name}.`) && file.endsWith(".pyc"))
    .map((file) => join(dir, file));
}

test("a damaged compiled file in the bytecode folder is dropped and the start retried once, with a warning", async () => {
  const ws = workspace({}, { ownCache: true });
  await (await start(ws)).close(); // compiles the SDK's imports (typing among them) into ws.cache
  const [typing] = compiled(ws.cache, "typing");
  expect(typing, "the worker imports typing at start").toBeDefined();
  const whole = readFileSync(typing!);
  writeFileSync(typing!, whole.subarray(0, whole.length >> 1)); // a write cut short by a full disk

  // Without the retry this start fails: Python dies importing typing with "marshal data too short".
  const warnings: WorkerWarning[] = [];
  const worker = await start(ws, { onWarning: (warning) => warnings.push(warning) });
  expect(worker.hello.type).toBe("hello");
  await worker.close();
  expect(warnings).toEqual([
    {
      code: "bytecode_cache_reset",
      message: expect.stringMatching(
        /^Python could not start: a compiled file in iCode's bytecode cache .+ is damaged \(EOFError: marshal data too short; .+\)\. Removed the \d+ compiled files there and started again\.$/,
      ),
    },
  ]);
  expect(warnings[0]!.message).toContain(ws.cache);
  // Written again, whole, by the second start; and the next start needs no retry.
  expect(readFileSync(compiled(ws.cache, "typing")[0]!).length).toBe(whole.length);
  const again: WorkerWarning[] = [];
  await (await start(ws, { onWarning: (warning) => again.push(warning) })).close();
  expect(again).toEqual([]);
});

test("a start that fails for another reason is not retried", async () => {
  const ws = workspace({}, { ownCache: true });
  const fake = script(
    ws,
    "counting-python",
    `echo run >> "${ws.path("runs")}"\necho "EOFError: something else" >&2\nexit 1`,
  );
  const warnings: WorkerWarning[] = [];
  await expect(
    startWorker({ python: fake, cwd: ws.dir, cacheDir: ws.cache, onWarning: (w) => warnings.push(w) }),
  ).rejects.toMatchObject({ code: "worker_failed" });
  expect(readFileSync(ws.path("runs"), "utf8")).toBe("run\n");
  expect(warnings).toEqual([]);
});

test("a worker that keeps failing on damaged bytecode is retried once, then fails", async () => {
  const ws = workspace();
  const fake = script(
    ws,
    "damaged-python",
    `echo run >> "${ws.path("runs")}"\necho "EOFError: marshal data too short" >&2\nexit 1`,
  );
  ws.write("cache/x/stale.cpython-311.pyc", "stale");
  ws.write("cache/x/keep.txt", "not compiled Python");
  const warnings: WorkerWarning[] = [];
  await expect(
    startWorker({
      python: fake,
      cwd: ws.dir,
      cacheDir: ws.path("cache"),
      onWarning: (w) => warnings.push(w),
    }),
  ).rejects.toThrow(/exited with code 1 before saying hello:\nEOFError: marshal data too short/);
  expect(readFileSync(ws.path("runs"), "utf8")).toBe("run\nrun\n");
  expect(warnings.map((w) => w.code)).toEqual(["bytecode_cache_reset"]);
  expect(existsSync(ws.path("cache/x/stale.cpython-311.pyc"))).toBe(false);
  expect(readFileSync(ws.path("cache/x/keep.txt"), "utf8")).toBe("not compiled Python");
});
