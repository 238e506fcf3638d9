import { describe, expect, it } from "vitest";
import { type Command, StoredCommandSchema } from "../../src/index";
import { codeOf, published, useFixture } from "./harness";
import type { StoreInit } from "./index";

export function commandConformance(name: string, init: StoreInit): void {
  describe(`${name}: the command queue of a run`, () => {
    const fx = useFixture(init);
    const newRun = async () => {
      const { store } = fx();
      return (await store.createRun({ definition_id: await published(store), task_input: "t" })).run_id;
    };

    it("queues commands in order; the lease holder takes each once and completes it with a result", async () => {
      const { store, clock } = fx();
      const runId = await newRun();
      const sent: Command[] = [
        { action: "pause" },
        { action: "approve_node", node_id: "build" },
        { action: "skip_node", node_id: "plan", note: "done by hand" },
        { action: "retry_node", node_id: "plan" },
        { action: "resume" },
        { action: "cancel" },
        { action: "stop_sessions" },
      ];
      const queued = [];
      for (const command of sent) queued.push(await store.enqueueCommand(runId, command));
      for (const c of queued) expect(StoredCommandSchema.parse(c)).toEqual(c);
      expect(queued.map((c) => c.state)).toEqual(sent.map(() => "queued"));
      const ids = queued.map((c) => c.command_id);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      expect(await codeOf(() => store.takeCommands(runId, "driver"))).toBe("pipeline_lease_not_held");
      await store.acquireLease(runId, "driver", 60_000);
      clock.advance(7);
      const taken = await store.takeCommands(runId, "driver");
      expect(taken.map((c) => c.command)).toEqual(sent);
      expect(taken[0]).toMatchObject({
        state: "taken",
        taken_by: "driver",
        taken_at: new Date(clock.now()).toISOString(),
      });
      expect(await store.takeCommands(runId, "driver")).toEqual([]);
      const done = await store.completeCommand(runId, ids[1]!, "driver", {
        ok: false,
        code: "not_waiting_approval",
        message: "build is pending",
      });
      expect(done).toMatchObject({ state: "done", result: { ok: false, code: "not_waiting_approval" } });
      expect(await store.getCommand(runId, ids[1]!)).toEqual(done);
      await store.completeCommand(runId, ids[0]!, "driver", { ok: true });
      expect(await codeOf(() => store.completeCommand(runId, ids[0]!, "driver", { ok: true }))).toBe(
        "pipeline_command_not_taken",
      );
      expect(await codeOf(() => store.completeCommand(runId, ids[2]!, "someone", { ok: true }))).toBe(
        "pipeline_command_not_taken",
      );
      expect(await codeOf(() => store.completeCommand(runId, 999_999, "driver", { ok: true }))).toBe(
        "pipeline_command_not_found",
      );
      expect((await store.listCommands(runId)).map((c) => c.state)).toEqual([
        "done",
        "done",
        "taken",
        "taken",
        "taken",
        "taken",
        "taken",
      ]);
    });

    it("gives the commands a dead driver took but never completed to the driver that takes over", async () => {
      const { store, clock } = fx();
      const runId = await newRun();
      await store.acquireLease(runId, "dead", 1_000);
      const first = await store.enqueueCommand(runId, { action: "pause" });
      await store.takeCommands(runId, "dead");
      const second = await store.enqueueCommand(runId, { action: "cancel" });
      clock.advance(1_000);
      expect(await store.acquireLease(runId, "next", 1_000)).toMatchObject({ ok: true, took_over: true });
      expect(await codeOf(() => store.completeCommand(runId, first.command_id, "dead", { ok: true }))).toBe(
        "pipeline_command_not_taken",
      );
      const taken = await store.takeCommands(runId, "next");
      expect(taken.map((c) => c.command_id)).toEqual([first.command_id, second.command_id]);
      expect(taken.every((c) => c.taken_by === "next")).toBe(true);
    });

    it("refuses a command of the wrong shape and an unknown run", async () => {
      const { store } = fx();
      const runId = await newRun();
      const bad = [
        { action: "explode" },
        { action: "approve_node" },
        { action: "pause", node_id: "x" },
      ] as unknown as Command[];
      for (const command of bad)
        expect(await codeOf(() => store.enqueueCommand(runId, command))).toBe("pipeline_input_invalid");
      expect(await codeOf(() => store.enqueueCommand("d".repeat(32), { action: "pause" }))).toBe(
        "pipeline_run_not_found",
      );
      await store.acquireLease(runId, "driver", 60_000);
      const c = await store.enqueueCommand(runId, { action: "pause" });
      await store.takeCommands(runId, "driver");
      const badResult = { ok: false } as unknown as Parameters<typeof store.completeCommand>[3];
      expect(await codeOf(() => store.completeCommand(runId, c.command_id, "driver", badResult))).toBe(
        "pipeline_input_invalid",
      );
    });
  });
}
