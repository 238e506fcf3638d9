import { expect, test } from "vitest";
import { loaded, node, start, workflowSource, workspace } from "./helpers";

/**
 * The protocol channel survives anything user code does (ARCHITECTURE.md, "The Python worker is untrusted
 * for the protocol"), and the engine notices a dead worker at once.
 */

function nodes(defs: string, names: string[]): string {
  const first = names[0]!;
  return workflowSource(
    `${defs}\n${names.map((n) => `${n} = wf.python("${n}", ${n}_fn)`).join("\n")}\nwf.start(${first})\n${names
      .slice(1)
      .map((n) => `wf.edge(${first}, ${n})`)
      .join("\n")}\nwf.output(${first})\n`,
  );
}

test("print() of several MiB during load and during a call keeps the channel intact", async () => {
  const ws = workspace({
    "big.py": `print("x" * (5 * 1024 * 1024))\n${nodes(
      `def big_fn(value):\n    print("y" * (5 * 1024 * 1024))\n    import sys\n    sys.stderr.write("z" * (3 * 1024 * 1024))\n    return "done"`,
      ["big"],
    )}`,
  });
  const worker = await start(ws);
  const result = await worker.load({ entry: ws.path("big.py"), packageDir: null });
  expect(result.ok).toBe(true);
  expect(result.output.truncated).toBe(true);
  expect(result.output.text).toBe("x".repeat(64 * 1024));
  const outcome = await worker.invoke(node("big"));
  expect(outcome).toMatchObject({ ok: true, value: { text: "done" }, output: { truncated: true } });
  expect(outcome.output.text).toBe("y".repeat(64 * 1024));
  expect(worker.native()).toEqual({ text: "", dropped_bytes: 0 });
});

test("fd-level writes during load and during a call go to the native capture, not to the call's output", async () => {
  const ws = workspace({
    "fd.py": `import os\nos.write(1, b"load fd1\\n")\nos.write(2, b"load fd2\\n")\n${nodes(
      `def fd_fn(value):\n    os.write(1, b"call fd1\\n")\n    os.write(2, b"call fd2\\n")\n    print("captured")\n    return "ok"`,
      ["fd"],
    )}`,
  });
  const worker = await start(ws);
  const result = await worker.load({ entry: ws.path("fd.py"), packageDir: null });
  expect(result.output.text).toBe("");
  const outcome = await worker.invoke(node("fd"));
  expect(outcome).toMatchObject({ ok: true, output: { text: "captured\n", truncated: false } });
  await waitFor(() => worker.native().text.includes("call fd2"));
  const native = worker.native().text;
  for (const line of ["load fd1", "load fd2", "call fd1", "call fd2"]) expect(native).toContain(line);
});

test("native output keeps the last 64 KiB and counts what it dropped", async () => {
  const ws = workspace({
    "flood.py": nodes(
      `import os\ndef flood_fn(value):\n    os.write(1, b"a" * 100000 + b"END")\n    return "ok"`,
      ["flood"],
    ),
  });
  const worker = await loaded(ws, "flood.py");
  await worker.invoke(node("flood"));
  await waitFor(() => worker.native().text.endsWith("END"));
  const native = worker.native();
  expect(native.dropped_bytes).toBe(100003 - 64 * 1024);
  expect(native.text).toHaveLength(64 * 1024);
});

test("a child process inherits fds 1 and 2 but cannot reach the protocol pipes", async () => {
  const child = [
    "import os, sys",
    "os.write(1, b'child fd1\\n')",
    "os.write(2, b'child fd2\\n')",
    "reached = []",
    "for fd in (3, 4):",
    "    try:",
    '        os.write(fd, b\'{"type":"result","id":1}\\n\')',
    "        reached.append(fd)",
    "    except OSError:",
    "        pass",
    "print('reached', reached)",
  ].join("\n");
  const ws = workspace({
    "kids.py": nodes(
      `import subprocess, sys\ndef kids_fn(value):\n    done = subprocess.run([sys.executable, "-c", ${JSON.stringify(child)}], close_fds=False)\n    proc = subprocess.Popen([sys.executable, "-c", ${JSON.stringify(child)}], stdout=subprocess.PIPE, close_fds=False, pass_fds=())\n    out, _ = proc.communicate()\n    return out.decode().strip()`,
      ["kids"],
    ),
  });
  const worker = await loaded(ws, "kids.py");
  const outcome = await worker.invoke(node("kids"));
  expect(outcome).toMatchObject({ ok: true, value: { text: "child fd1\nreached []" } });
  await waitFor(() => worker.native().text.includes("reached"));
  // fds 1 and 2 are two pipes: their interleaving is not defined.
  for (const line of ["child fd1\n", "child fd2\n", "reached []\n"])
    expect(worker.native().text).toContain(line);
  // The channel is still fine.
  expect(await worker.invoke(node("kids"))).toMatchObject({ ok: true });
});

test("user code writing to fds 3 and 4 in the worker itself does not reach the channel", async () => {
  const ws = workspace({
    "fds.py": nodes(
      `import os\ndef fds_fn(value):\n    reached = []\n    for fd in (3, 4):\n        try:\n            os.write(fd, b'{"type":"result","id":1,"ok":true}\\n')\n            reached.append(fd)\n        except OSError:\n            pass\n    return "wrote"`,
      ["fds"],
    ),
  });
  const worker = await loaded(ws, "fds.py");
  const refused: string[] = [];
  worker.on("protocol_error", (message) => refused.push(message));
  expect(await worker.invoke(node("fds"))).toMatchObject({ ok: true, value: { text: "wrote" } });
  expect(await worker.invoke(node("fds"))).toMatchObject({ ok: true, value: { text: "wrote" } });
  expect(refused).toEqual([]);
});

test("a process forked by a node (without exec) cannot answer for the worker", async () => {
  const ws = workspace({
    "fork.py": nodes(
      `import os, time, asyncio\ndef fork_fn(value):\n    pid = os.fork()\n    if pid == 0:\n        time.sleep(0.2)\n        return "from the child"\n    os.waitpid(pid, 0)\n    return "from the parent"\nasync def afork_fn(value):\n    pid = os.fork()\n    if pid == 0:\n        await asyncio.sleep(0.2)\n        return "from the child"\n    await asyncio.sleep(0.5)\n    return "from the parent " + str(os.waitpid(pid, os.WNOHANG)[0] == pid)`,
      ["fork", "afork"],
    ),
  });
  const worker = await loaded(ws, "fork.py");
  const refused: string[] = [];
  worker.on("protocol_error", (message) => refused.push(message));
  expect(await worker.invoke(node("fork"))).toMatchObject({ ok: true, value: { text: "from the parent" } });
  expect(await worker.invoke(node("afork"))).toMatchObject({
    ok: true,
    value: { text: "from the parent True" },
  });
  const many = await Promise.all(
    Array.from({ length: 20 }, (_, i) => worker.invoke(node("fork", String(i)))),
  );
  expect(many.map((outcome) => outcome.ok && outcome.kind === "node" && outcome.value.text)).toEqual(
    Array(20).fill("from the parent"),
  );
  expect(refused).toEqual([]);
});

test("an unclosed child process and a blocking non-daemon thread do not keep the worker from answering or exiting", async () => {
  const ws = workspace({
    "stuck.py": `import threading, time, subprocess, sys\nstop = threading.Event()\nthreading.Thread(target=stop.wait).start()\n${nodes(
      `def stuck_fn(value):\n    threading.Thread(target=stop.wait).start()\n    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])\n    return "answered"`,
      ["stuck"],
    )}`,
  });
  const worker = await loaded(ws, "stuck.py");
  expect(await worker.invoke(node("stuck"))).toMatchObject({ ok: true, value: { text: "answered" } });
  const closing = Date.now();
  await worker.close();
  expect(Date.now() - closing).toBeLessThan(1_500);
  expect((await worker.exited).code).toBe(0);
});

test("os._exit during a call rejects every pending call with worker_lost at once", async () => {
  const ws = workspace({
    "exit.py": nodes(
      `import os, time\ndef exit_fn(value):\n    time.sleep(0.2)\n    os.write(2, b"bye\\n")\n    os._exit(3)\ndef slow_fn(value):\n    time.sleep(30)\n    return "never"`,
      ["exit", "slow"],
    ),
  });
  const worker = await loaded(ws, "exit.py");
  const started = Date.now();
  const slow = worker.invoke(node("slow", "", { timeout_ms: 60_000 }));
  const exiting = worker.invoke(node("exit"));
  await expect(exiting).rejects.toMatchObject({ code: "worker_lost" });
  await expect(slow).rejects.toMatchObject({ code: "worker_lost" });
  expect(Date.now() - started).toBeLessThan(2_000);
  await expect(exiting).rejects.toThrow(/exited with code 3.*\n?.*bye/s);
  expect(await worker.exited).toEqual({ code: 3, signal: null });
  expect(worker.alive).toBe(false);
  await expect(worker.invoke(node("slow"))).rejects.toMatchObject({ code: "worker_lost" });
});

test("a value over 16 MiB fails the call with value_too_large and the worker stays usable", async () => {
  const ws = workspace({
    "huge.py": nodes(
      `from chrys.workflows import WorkflowValue\ndef huge_fn(value):\n    return WorkflowValue("t", ["x" * 4_000_000 for _ in range(5)])\ndef small_fn(value):\n    return "small"`,
      ["huge", "small"],
    ),
  });
  const worker = await loaded(ws, "huge.py");
  const outcome = await worker.invoke(node("huge"));
  expect(outcome).toMatchObject({ ok: false, error: { code: "value_too_large", phase: "node" } });
  if (!outcome.ok) expect(outcome.error.message).toMatch(/over the limit of 16,777,216 bytes/);
  expect(await worker.invoke(node("small"))).toMatchObject({ ok: true, value: { text: "small" } });
});

test("an input over 16 MiB is refused before it is sent", async () => {
  const ws = workspace({ "echo.py": nodes(`def echo_fn(value):\n    return value`, ["echo"]) });
  const worker = await loaded(ws, "echo.py");
  const outcome = await worker.invoke(node("echo", "é".repeat(9 * 1024 * 1024)));
  expect(outcome).toMatchObject({ ok: false, error: { code: "value_too_large" } });
  expect(await worker.invoke(node("echo", "fine"))).toMatchObject({ ok: true, value: { text: "fine" } });
});

test("concurrent calls are answered out of order, each with its own captured output", async () => {
  const ws = workspace({
    "many.py": nodes(
      `import asyncio, time\ndef sync_fn(value):\n    print("sync start", value.text)\n    time.sleep(float(value.text))\n    print("sync end", value.text)\n    return value\nasync def asy_fn(value):\n    print("async start", value.text)\n    await asyncio.sleep(float(value.text))\n    print("async end", value.text)\n    return value`,
      ["sync", "asy"],
    ),
  });
  const worker = await loaded(ws, "many.py");
  const order: string[] = [];
  const run = (name: string, delay: string) =>
    worker.invoke(node(name, delay)).then((outcome) => {
      order.push(`${name} ${delay}`);
      return outcome;
    });
  const results = await Promise.all([
    run("sync", "0.6"),
    run("asy", "0.4"),
    run("sync", "0.2"),
    run("asy", "0.01"),
  ]);
  expect(order).toEqual(["asy 0.01", "sync 0.2", "asy 0.4", "sync 0.6"]);
  const outputs = results.map((r) => r.output.text);
  expect(outputs).toEqual([
    "sync start 0.6\nsync end 0.6\n",
    "async start 0.4\nasync end 0.4\n",
    "sync start 0.2\nsync end 0.2\n",
    "async start 0.01\nasync end 0.01\n",
  ]);
});

test("user code reads end-of-file on stdin", async () => {
  const ws = workspace({
    "stdin.py": nodes(
      `import sys, os\ndef stdin_fn(value):\n    try:\n        input("name? ")\n        got = "input returned"\n    except EOFError:\n        got = "EOFError"\n    return got + "|" + repr(sys.stdin.read()) + "|" + repr(os.read(0, 10))`,
      ["stdin"],
    ),
  });
  const worker = await loaded(ws, "stdin.py");
  expect(await worker.invoke(node("stdin"))).toMatchObject({ ok: true, value: { text: "EOFError|''|b''" } });
});

test("user code replacing or closing sys.stdout does not break capturing for later calls", async () => {
  const ws = workspace({
    "swap.py": nodes(
      `import sys, io\ndef swap_fn(value):\n    sys.stdout.close()\n    print("after close")\n    return "ok"\ndef after_fn(value):\n    print("still captured")\n    return "ok"`,
      ["swap", "after"],
    ),
  });
  const worker = await loaded(ws, "swap.py");
  expect(await worker.invoke(node("swap"))).toMatchObject({ ok: true, output: { text: "after close\n" } });
  expect(await worker.invoke(node("after"))).toMatchObject({
    ok: true,
    output: { text: "still captured\n" },
  });
});

test("the worker ignores SIGINT sent to it (the engine decides when it ends)", async () => {
  const ws = workspace({ "echo.py": nodes(`def echo_fn(value):\n    return value`, ["echo"]) });
  const worker = await loaded(ws, "echo.py");
  process.kill(worker.pid!, "SIGINT");
  await new Promise((done) => setTimeout(done, 100));
  expect(await worker.invoke(node("echo", "alive"))).toMatchObject({ ok: true, value: { text: "alive" } });
});

async function waitFor(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((done) => setTimeout(done, 10));
  }
}
