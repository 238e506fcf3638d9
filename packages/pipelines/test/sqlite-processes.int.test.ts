import { join } from "node:path";
import { execa } from "execa";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSqlitePipelineStore, type PipelineStore } from "../src/index";
import { ensureBuilt } from "./build";
import { chain } from "./conformance/harness";
import { tempDir } from "./helpers";

// Several processes on one database, as in use: a driver holding a run's lease, a CLI sending control
// actions, a second driver taking over from a dead one. The children load the built package.
const SCRIPT = new URL("./fixtures/store-process.mjs", import.meta.url).pathname;

function child(chrysHome: string, mode: string, args: unknown) {
  return execa(process.execPath, [SCRIPT, chrysHome, mode, JSON.stringify(args)]);
}
const output = (result: { stdout: string }) => JSON.parse(result.stdout.trim().split("\n").at(-1)!);

describe("the SQLite store used by several processes at once", () => {
  let chrysHome: string;
  let store: PipelineStore;

  beforeAll(ensureBuilt, 180_000);
  afterEach(async () => {
    await store?.close();
  });
  const open = (now?: () => number) => {
    chrysHome = join(tempDir(), "chrys");
    store = openSqlitePipelineStore({ chrysHome, ...(now === undefined ? {} : { now }) });
    return store;
  };

  it("loses no update when three processes change one definition from the revisions they read", async () => {
    open();
    const draft = await store.createDefinition(chain());
    const count = 100;
    const children = [
      child(chrysHome, "bump", { id: draft.id, count, tag: "a" }),
      child(chrysHome, "bump", { id: draft.id, count, tag: "b" }),
    ];
    let mine = 0;
    while (mine < count) {
      const current = await store.getDefinition(draft.id);
      try {
        await store.updateDefinition(
          draft.id,
          { ...current.definition, description: `parent ${mine}` },
          { expected_revision: current.revision },
        );
        mine++;
      } catch (error) {
        expect((error as { code: string }).code).toBe("pipeline_revision_conflict");
      }
      // Let the children's writes in between ours.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const results = (await Promise.all(children)).map(output);
    expect(results.map((r) => r.done)).toEqual([count, count]);
    expect((await store.getDefinition(draft.id)).revision).toBe(1 + 3 * count);
  });

  it("gives each run's lease to exactly one of two processes racing for it", async () => {
    open();
    const id = (await store.createDefinition(chain())).id;
    await store.publishDefinition(id);
    const runs: string[] = [];
    for (let i = 0; i < 30; i++)
      runs.push((await store.createRun({ definition_id: id, task_input: `${i}` })).run_id);
    const [a, b] = (
      await Promise.all([
        child(chrysHome, "lease", { runs, owner: "a" }),
        child(chrysHome, "lease", { runs: [...runs].reverse(), owner: "b" }),
      ])
    ).map(output);
    expect([...a.won, ...b.won].sort()).toEqual([...runs].sort());
    for (const runId of runs) {
      const lease = await store.getLease(runId);
      expect(lease?.owner).toBe(a.won.includes(runId) ? "a" : "b");
    }
  });

  it("delivers every command a CLI process sends to the driving process exactly once", async () => {
    open();
    const id = (await store.createDefinition(chain())).id;
    await store.publishDefinition(id);
    const run = (await store.createRun({ definition_id: id, task_input: "t" })).run_id;
    const count = 60;
    const driver = child(chrysHome, "drive", { run, owner: "driver", count });
    const sender = child(chrysHome, "send", { run, count });
    const [driven, sent] = (await Promise.all([driver, sender])).map(output);
    expect([...driven.completed].sort((x: number, y: number) => x - y)).toEqual(sent.sent);
    expect(new Set(driven.completed).size).toBe(count);
    const commands = await store.listCommands(run);
    expect(
      commands.every((c) => c.state === "done" && c.taken_by === "driver" && c.result?.ok === true),
    ).toBe(true);
  });

  it("lets a new driver take over from one killed with SIGKILL: the run's state and its commands survive", async () => {
    // This process sees the dead driver's 10-minute lease as expired by running its clock an hour ahead.
    open(() => Date.now() + 3_600_000);
    const id = (await store.createDefinition(chain())).id;
    await store.publishDefinition(id);
    const run = (await store.createRun({ definition_id: id, task_input: "t" })).run_id;
    const pause = await store.enqueueCommand(run, { action: "pause" });
    const holder = child(chrysHome, "hold", { run, owner: "first-driver" });
    const ready = await new Promise<{ holding: number; taken: number[] }>((resolve, reject) => {
      holder.stdout?.on("data", (chunk: Buffer) => resolve(JSON.parse(chunk.toString().trim())));
      holder.catch(reject);
    });
    expect(ready).toEqual({ holding: 1, taken: [pause.command_id] });
    holder.kill("SIGKILL");
    await expect(holder).rejects.toMatchObject({ signal: "SIGKILL" });
    const nodes = await store.getRunNodes(run);
    expect(nodes[0]).toMatchObject({ node_id: "plan", state: "running", attempts: 1 });
    expect((await store.getRun(run)).state).toBe("running");
    const taken = await store.acquireLease(run, "second-driver", 60_000);
    expect(taken).toMatchObject({
      ok: true,
      took_over: true,
      lease: { owner: "second-driver", generation: 2 },
    });
    expect((await store.takeCommands(run, "second-driver")).map((c) => c.command_id)).toEqual([
      pause.command_id,
    ]);
    await store.updateRun(run, "second-driver", { nodes: { plan: { state: "ready", attempts: 1 } } });
  });
});
