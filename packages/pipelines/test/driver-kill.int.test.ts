import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ScriptedExecutor } from "../src/testing";
import { ensureBuilt } from "./build";
import { node, type RunFixture, runFixture } from "./run-helpers";

// The crash test: a driving process is killed with SIGKILL in the middle of a 20-node pipeline; a
// second driver takes the run over once the lease expires, and no finished node runs twice.
const SCRIPT = new URL("./fixtures/driver-process.mjs", import.meta.url).pathname;
const CONTROL = new URL("./fixtures/control-process.mjs", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fx: RunFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

describe("a driver killed with SIGKILL", () => {
  beforeAll(ensureBuilt, 180_000);

  it("is taken over: finished nodes never run again, the interrupted ones get a new attempt", async () => {
    const nodes = Array.from({ length: 20 }, (_, i) => {
      const layer = Math.floor(i / 4);
      return node(`n${i}`, layer === 0 ? [] : [0, 1, 2, 3].map((k) => `n${(layer - 1) * 4 + k}`));
    });
    fx = await runFixture({ name: "Twenty", nodes });
    const callsFile = join(fx.runDir, "..", "child-calls.jsonl");
    const ttl = 1500; // renewed every 500 ms: a loaded machine still keeps it until the kill
    const child = execa(process.execPath, [
      SCRIPT,
      fx.chrysHome,
      JSON.stringify({ runId: fx.runId, runDir: fx.runDir, callsFile, delayMs: 40, leaseTtlMs: ttl }),
    ]);
    const childCalls = () =>
      existsSync(callsFile)
        ? readFileSync(callsFile, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as { node: string; attempt: number })
        : [];
    while (childCalls().length < 10) await sleep(5);
    child.kill("SIGKILL");
    await expect(child).rejects.toMatchObject({ signal: "SIGKILL" });

    const atKill = await fx.store.getRunNodes(fx.runId);
    const finished = atKill.filter((n) => n.state === "succeeded").map((n) => n.node_id);
    const interrupted = atKill
      .filter((n) => n.state === "launching" || n.state === "running")
      .map((n) => n.node_id);
    expect(finished.length).toBeGreaterThanOrEqual(4);
    expect(finished.length).toBeLessThan(20);
    await sleep(ttl + 100);

    const executor = new ScriptedExecutor({}, { delayMs: 5 });
    const result = await fx.drive(executor, { owner: "driver-2" });
    expect(result.run.state).toBe("succeeded");
    const byChild = childCalls();
    for (const n of result.nodes) {
      const fromChild = byChild.filter((c) => c.node === n.node_id).length;
      const calls = fromChild + executor.callsOf(n.node_id).length;
      if (interrupted.includes(n.node_id)) {
        // Its first attempt was counted when it went launching; the kill may have come before the call.
        expect(n.attempts, n.node_id).toBe(2);
        expect(fromChild, n.node_id).toBeLessThanOrEqual(1);
        expect(
          executor.callsOf(n.node_id).map((c) => c.attempt),
          n.node_id,
        ).toEqual([2]);
      } else {
        expect([calls, n.attempts], n.node_id).toEqual([1, 1]);
      }
    }
    expect(executor.calls.length).toBe(20 - finished.length);
    const lines = (await readFile(join(fx.runDir, "events.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual(await fx.store.listEvents(fx.runId));
  }, 60_000);

  it("takes control actions from another process while it drives", async () => {
    fx = await runFixture({ name: "Remote", nodes: [node("a"), node("b", ["a"])] });
    const executor = new ScriptedExecutor({ a: { gated: true } });
    const driving = fx.drive(executor);
    await executor.started("a");
    const sent = await execa(process.execPath, [
      CONTROL,
      fx.chrysHome,
      fx.runId,
      JSON.stringify({ action: "pause" }),
    ]);
    expect(JSON.parse(sent.stdout.trim())).toMatchObject({
      result: { ok: true },
      via: "driver",
      needsDriver: false,
      run: { state: "paused" },
    });
    executor.release("a");
    expect(await driving).toMatchObject({ stop: "paused", run: { state: "paused" } });
    expect(executor.callsOf("b")).toHaveLength(0);
    const resumed = await execa(process.execPath, [
      CONTROL,
      fx.chrysHome,
      fx.runId,
      JSON.stringify({ action: "resume" }),
    ]);
    expect(JSON.parse(resumed.stdout.trim())).toMatchObject({
      result: { ok: true },
      via: "direct",
      needsDriver: true,
    });
    expect((await fx.drive(executor)).run.state).toBe("succeeded");
  }, 60_000);
});
