import { describe, expect, it } from "vitest";
import { PipelineRunSchema, RunNodeSchema } from "../../src/index";
import { chain, codeOf, published, useFixture } from "./harness";
import type { StoreInit } from "./index";

export function runConformance(name: string, init: StoreInit): void {
  describe(`${name}: runs and node states`, () => {
    const fx = useFixture(init);

    it("starts a run of a published definition: a snapshot, every node pending", async () => {
      const { store, clock } = fx();
      const id = await published(store);
      const run = await store.createRun({ definition_id: id, task_input: "fix it" });
      expect(PipelineRunSchema.parse(run)).toEqual(run);
      expect(run).toMatchObject({
        definition_id: id,
        definition_revision: 2,
        task_input: "fix it",
        state: "pending",
        failure_policy: "pause",
        created_at: new Date(clock.now()).toISOString(),
        started_at: null,
        ended_at: null,
      });
      expect(run.run_id).toMatch(/^[0-9a-f]{32}$/);
      expect(run.definition).toEqual((await store.getDefinition(id)).definition);
      const nodes = await store.getRunNodes(run.run_id);
      for (const node of nodes) expect(RunNodeSchema.parse(node)).toEqual(node);
      expect(
        nodes.map((n) => [
          n.node_id,
          n.state,
          n.attempts,
          n.handoff,
          n.session_ref,
          n.approval_granted,
          n.error,
        ]),
      ).toEqual([
        ["plan", "pending", 0, null, null, false, null],
        ["build", "pending", 0, null, null, false, null],
      ]);
      // The run keeps its snapshot when the definition changes later.
      await store.updateDefinition(id, chain("Changed"));
      expect((await store.getRun(run.run_id)).definition.name).toBe("Chain");
      expect((await store.getRun(run.run_id)).definition_revision).toBe(2);
    });

    it("refuses a draft, an unknown definition and a task input over 20000 characters", async () => {
      const { store } = fx();
      const draft = await store.createDefinition(chain());
      const error = await codeOf(() => store.createRun({ definition_id: draft.id, task_input: "x" }));
      expect(error).toBe("pipeline_definition_draft");
      expect(await codeOf(() => store.createRun({ definition_id: "none", task_input: "x" }))).toBe(
        "pipeline_definition_not_found",
      );
      const id = await published(store, "Other");
      // Characters, not UTF-16 units: 20000 emoji are 20000 characters.
      await store.createRun({ definition_id: id, task_input: "🚀".repeat(20_000) });
      expect(await codeOf(() => store.createRun({ definition_id: id, task_input: "x".repeat(20_001) }))).toBe(
        "pipeline_task_input_too_long",
      );
      expect(await store.listRuns()).toHaveLength(1);
    });

    it("takes a run ID, refuses one in use or malformed, and a failure policy for the run", async () => {
      const { store } = fx();
      const id = await published(store);
      const run_id = "a".repeat(32);
      const run = await store.createRun({
        definition_id: id,
        task_input: "t",
        run_id,
        failure_policy: "fail_fast",
      });
      expect(run).toMatchObject({ run_id, failure_policy: "fail_fast" });
      expect(await codeOf(() => store.createRun({ definition_id: id, task_input: "t", run_id }))).toBe(
        "pipeline_run_exists",
      );
      expect(
        await codeOf(() => store.createRun({ definition_id: id, task_input: "t", run_id: "A".repeat(32) })),
      ).toBe("pipeline_invalid_id");
      expect(await codeOf(() => store.getRun("b".repeat(32)))).toBe("pipeline_run_not_found");
      expect(await codeOf(() => store.getRunNodes("nope"))).toBe("pipeline_invalid_id");
    });

    it("lists runs newest first, by definition and state, up to a limit", async () => {
      const { store, clock } = fx();
      const a = await published(store, "A");
      const b = await published(store, "B");
      const r1 = await store.createRun({ definition_id: a, task_input: "1" });
      clock.advance(10);
      const r2 = await store.createRun({ definition_id: b, task_input: "2" });
      clock.advance(10);
      const r3 = await store.createRun({ definition_id: a, task_input: "3" });
      await store.acquireLease(r3.run_id, "driver", 60_000);
      await store.updateRun(r3.run_id, "driver", { run: { state: "running" } });
      const ids = (runs: { run_id: string }[]) => runs.map((r) => r.run_id);
      expect(ids(await store.listRuns())).toEqual([r3.run_id, r2.run_id, r1.run_id]);
      expect(ids(await store.listRuns({ definition_id: a }))).toEqual([r3.run_id, r1.run_id]);
      expect(ids(await store.listRuns({ states: ["pending"] }))).toEqual([r2.run_id, r1.run_id]);
      expect(ids(await store.listRuns({ states: ["running", "paused"] }))).toEqual([r3.run_id]);
      expect(ids(await store.listRuns({ limit: 1 }))).toEqual([r3.run_id]);
    });

    it("lets the lease holder change the run and its nodes in one write, stamping times", async () => {
      const { store, clock } = fx();
      const run = await store.createRun({ definition_id: await published(store), task_input: "t" });
      await store.acquireLease(run.run_id, "driver", 60_000);
      clock.advance(5);
      const started = await store.updateRun(run.run_id, "driver", {
        run: { state: "running" },
        nodes: { plan: { state: "running", attempts: 1, session_ref: "acp:claude-code:7f3a" } },
      });
      const at = new Date(clock.now()).toISOString();
      expect(started.run).toMatchObject({ state: "running", started_at: at, ended_at: null, updated_at: at });
      expect(started.nodes).toEqual([
        expect.objectContaining({
          node_id: "plan",
          state: "running",
          attempts: 1,
          session_ref: "acp:claude-code:7f3a",
          updated_at: at,
        }),
      ]);
      clock.advance(5);
      await store.updateRun(run.run_id, "driver", {
        nodes: {
          plan: { state: "succeeded", handoff: { summary: "planned", artifacts: ["plan.md"] } },
          build: { state: "waiting_approval" },
        },
      });
      await store.updateRun(run.run_id, "driver", {
        nodes: {
          build: {
            approval_granted: true,
            state: "failed",
            error: { code: "node_failed", message: "exit 1" },
          },
        },
      });
      const ended = await store.updateRun(run.run_id, "driver", { run: { state: "failed" } });
      expect(ended.run.ended_at).toBe(new Date(clock.now()).toISOString());
      expect(ended.run.started_at).toBe(at);
      const nodes = await store.getRunNodes(run.run_id);
      expect(
        nodes.map((n) => [n.node_id, n.state, n.handoff, n.approval_granted, n.error, n.session_ref]),
      ).toEqual([
        [
          "plan",
          "succeeded",
          { summary: "planned", artifacts: ["plan.md"] },
          false,
          null,
          "acp:claude-code:7f3a",
        ],
        ["build", "failed", null, true, { code: "node_failed", message: "exit 1" }, null],
      ]);
      // Leaving a terminal state (a retry) clears ended_at; null clears a field.
      const again = await store.updateRun(run.run_id, "driver", {
        run: { state: "running" },
        nodes: { build: { error: null, state: "ready" } },
      });
      expect(again.run.ended_at).toBeNull();
      expect(again.nodes[0]).toMatchObject({ error: null, state: "ready", approval_granted: true });
    });

    it("refuses a write without the lease, to an unknown node (changing nothing), or of the wrong shape", async () => {
      const { store } = fx();
      const run = await store.createRun({ definition_id: await published(store), task_input: "t" });
      expect(await codeOf(() => store.updateRun(run.run_id, "driver", { run: { state: "running" } }))).toBe(
        "pipeline_lease_not_held",
      );
      await store.acquireLease(run.run_id, "driver", 60_000);
      expect(
        await codeOf(() =>
          store.updateRun(run.run_id, "driver", {
            run: { state: "running" },
            nodes: { plan: { state: "running" }, nope: { state: "running" } },
          }),
        ),
      ).toBe("pipeline_node_not_found");
      expect((await store.getRun(run.run_id)).state).toBe("pending");
      expect((await store.getRunNodes(run.run_id))[0]!.state).toBe("pending");
      const bad = { nodes: { plan: { state: "exploded" } } } as unknown as Parameters<
        typeof store.updateRun
      >[2];
      expect(await codeOf(() => store.updateRun(run.run_id, "driver", bad))).toBe("pipeline_input_invalid");
      const extra = { run: { state: "running", note: "x" } } as unknown as Parameters<
        typeof store.updateRun
      >[2];
      expect(await codeOf(() => store.updateRun(run.run_id, "driver", extra))).toBe("pipeline_input_invalid");
    });
  });
}
