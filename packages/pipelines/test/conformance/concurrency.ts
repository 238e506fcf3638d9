import { describe, expect, it } from "vitest";
import { chain, codeOf, published, useFixture } from "./harness";
import type { StoreInit } from "./index";

export function concurrencyConformance(name: string, init: StoreInit): void {
  describe(`${name}: two store instances over the same data`, () => {
    const fx = useFixture(init);

    it("see each other's writes at once", async () => {
      const { store, openAnother } = fx();
      const other = await openAnother();
      const draft = await store.createDefinition(chain());
      expect(await other.getDefinition(draft.id)).toEqual(draft);
      await other.publishDefinition(draft.id);
      expect((await store.getDefinition(draft.id)).status).toBe("published");
    });

    it("let one of two updates from the same revision win; the other gets a conflict", async () => {
      const { store, openAnother } = fx();
      const other = await openAnother();
      const draft = await store.createDefinition(chain());
      const results = await Promise.allSettled([
        store.updateDefinition(draft.id, chain("From A"), { expected_revision: 1 }),
        other.updateDefinition(draft.id, chain("From B"), { expected_revision: 1 }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(rejected.reason.code).toBe("pipeline_revision_conflict");
      expect((await store.getDefinition(draft.id)).revision).toBe(2);
    });

    it("give a run's lease to exactly one of two drivers; a control action goes through the store", async () => {
      const { store, openAnother } = fx();
      const cli = await openAnother();
      const run = await store.createRun({ definition_id: await published(store), task_input: "t" });
      const [a, b] = await Promise.all([
        store.acquireLease(run.run_id, "a", 60_000),
        cli.acquireLease(run.run_id, "b", 60_000),
      ]);
      expect([a.ok, b.ok].sort()).toEqual([false, true]);
      const [driver, owner] = a.ok ? [store, "a"] : [cli, "b"];
      const sender = a.ok ? cli : store;
      const sent = await sender.enqueueCommand(run.run_id, { action: "cancel" });
      const [taken] = await driver.takeCommands(run.run_id, owner);
      expect(taken?.command_id).toBe(sent.command_id);
      await driver.completeCommand(run.run_id, sent.command_id, owner, { ok: true });
      expect((await sender.getCommand(run.run_id, sent.command_id)).result).toEqual({ ok: true });
      expect(
        await codeOf(() => sender.updateRun(run.run_id, a.ok ? "b" : "a", { run: { state: "canceled" } })),
      ).toBe("pipeline_lease_not_held");
    });
  });
}
