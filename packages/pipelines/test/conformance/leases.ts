import { describe, expect, it } from "vitest";
import { LeaseSchema } from "../../src/index";
import { codeOf, published, useFixture } from "./harness";
import type { StoreInit } from "./index";

export function leaseConformance(name: string, init: StoreInit): void {
  describe(`${name}: leases`, () => {
    const fx = useFixture(init);
    const newRun = async () => {
      const { store } = fx();
      return (await store.createRun({ definition_id: await published(store), task_input: "t" })).run_id;
    };

    it("gives a free lease, refuses a live one to another owner, and renews it for its owner", async () => {
      const { store, clock } = fx();
      const runId = await newRun();
      const first = await store.acquireLease(runId, "cli-1", 30_000);
      expect(first).toEqual({
        ok: true,
        took_over: false,
        lease: {
          run_id: runId,
          owner: "cli-1",
          generation: 1,
          acquired_at: new Date(clock.now()).toISOString(),
          expires_at: new Date(clock.now() + 30_000).toISOString(),
        },
      });
      if (first.ok) expect(LeaseSchema.parse(first.lease)).toEqual(first.lease);
      clock.advance(29_999);
      expect(await store.acquireLease(runId, "cli-2", 30_000)).toMatchObject({
        ok: false,
        held_by: { owner: "cli-1", generation: 1 },
      });
      const again = await store.acquireLease(runId, "cli-1", 30_000);
      expect(again).toMatchObject({
        ok: true,
        took_over: false,
        lease: { generation: 1, expires_at: new Date(clock.now() + 30_000).toISOString() },
      });
      const renewed = await store.renewLease(runId, "cli-1", 5_000);
      expect(renewed.expires_at).toBe(new Date(clock.now() + 5_000).toISOString());
      expect(await store.getLease(runId)).toEqual(renewed);
    });

    it("lets another owner take an expired lease over; the old owner can then write nothing", async () => {
      const { store, clock } = fx();
      const runId = await newRun();
      await store.acquireLease(runId, "dead-driver", 10_000);
      clock.advance(10_000);
      const taken = await store.acquireLease(runId, "next-driver", 10_000);
      expect(taken).toMatchObject({
        ok: true,
        took_over: true,
        lease: { owner: "next-driver", generation: 2 },
      });
      expect(await codeOf(() => store.renewLease(runId, "dead-driver", 10_000))).toBe(
        "pipeline_lease_not_held",
      );
      expect(await codeOf(() => store.updateRun(runId, "dead-driver", { run: { state: "running" } }))).toBe(
        "pipeline_lease_not_held",
      );
      expect(await codeOf(() => store.takeCommands(runId, "dead-driver"))).toBe("pipeline_lease_not_held");
      expect(await store.releaseLease(runId, "dead-driver")).toBe(false);
      expect((await store.updateRun(runId, "next-driver", { run: { state: "running" } })).run.state).toBe(
        "running",
      );
    });

    it("lets the owner renew an expired lease that nobody took over", async () => {
      const { store, clock } = fx();
      const runId = await newRun();
      await store.acquireLease(runId, "slow", 1_000);
      clock.advance(5_000);
      expect((await store.renewLease(runId, "slow", 1_000)).owner).toBe("slow");
    });

    it("releases a lease for the next owner, counting generations", async () => {
      const { store } = fx();
      const runId = await newRun();
      await store.acquireLease(runId, "a", 60_000);
      expect(await store.releaseLease(runId, "b")).toBe(false);
      expect(await store.releaseLease(runId, "a")).toBe(true);
      expect(await store.getLease(runId)).toBeNull();
      expect(await store.acquireLease(runId, "b", 60_000)).toMatchObject({
        ok: true,
        took_over: false,
        lease: { generation: 2 },
      });
    });

    it("refuses a bad ttl and an unknown run", async () => {
      const { store } = fx();
      const runId = await newRun();
      expect(await codeOf(() => store.acquireLease(runId, "a", 0))).toBe("pipeline_input_invalid");
      expect(await codeOf(() => store.renewLease(runId, "a", 1.5))).toBe("pipeline_input_invalid");
      expect(await codeOf(() => store.acquireLease("c".repeat(32), "a", 1000))).toBe(
        "pipeline_run_not_found",
      );
      expect(await codeOf(() => store.getLease("c".repeat(32)))).toBe("pipeline_run_not_found");
    });
  });
}
