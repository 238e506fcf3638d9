import { describe, expect, it } from "vitest";
import { NodeAttemptSchema, type PipelineEvent, StoredPipelineEventSchema } from "../../src/index";
import { codeOf, published, useFixture } from "./harness";
import type { StoreInit } from "./index";

export function eventConformance(name: string, init: StoreInit): void {
  describe(`${name}: run events and node attempts`, () => {
    const fx = useFixture(init);
    const leasedRun = async () => {
      const { store } = fx();
      const runId = (await store.createRun({ definition_id: await published(store), task_input: "t" }))
        .run_id;
      await store.acquireLease(runId, "driver", 30_000);
      return runId;
    };
    const state = (node_id: string, from: "pending" | "ready", to: "ready" | "launching"): PipelineEvent => ({
      type: "node_state",
      node_id,
      from,
      to,
      reason: "test",
    });

    it("appends events with seq from 1 inside updateRun, and replays them from any seq", async () => {
      const { store, clock } = fx();
      const runId = await leasedRun();
      const first = await store.updateRun(runId, "driver", {
        run: { state: "running" },
        nodes: { plan: { state: "ready" } },
        events: [
          { type: "run_state", from: "pending", to: "running", reason: "test" },
          state("plan", "pending", "ready"),
        ],
      });
      expect(first.events.map((e) => e.seq)).toEqual([1, 2]);
      expect(first.events[0]).toEqual({
        run_id: runId,
        seq: 1,
        time: new Date(clock.now()).toISOString(),
        event: { type: "run_state", from: "pending", to: "running", reason: "test" },
      });
      clock.advance(5);
      const appended = await store.appendEvents(runId, "driver", [{ type: "supervision", on: true }]);
      expect(appended.map((e) => e.seq)).toEqual([3]);
      const all = await store.listEvents(runId);
      for (const e of all) expect(StoredPipelineEventSchema.parse(e)).toEqual(e);
      expect(all.map((e) => [e.seq, e.event.type])).toEqual([
        [1, "run_state"],
        [2, "node_state"],
        [3, "supervision"],
      ]);
      expect(await store.listEvents(runId, { fromSeq: 2 })).toEqual(all.slice(1));
      expect(await store.listEvents(runId, { fromSeq: 4 })).toEqual([]);
      expect(await store.listEvents(runId, { fromSeq: 1, limit: 1 })).toEqual(all.slice(0, 1));
      // Another store over the same data sees the same stream.
      expect(await (await fx().openAnother()).listEvents(runId)).toEqual(all);
    });

    it("writes state and events together or not at all", async () => {
      const { store } = fx();
      const runId = await leasedRun();
      expect(
        await codeOf(() =>
          store.updateRun(runId, "driver", {
            nodes: { nope: { state: "ready" } },
            events: [state("plan", "pending", "ready")],
          }),
        ),
      ).toBe("pipeline_node_not_found");
      expect(
        await codeOf(() =>
          store.updateRun(runId, "driver", {
            nodes: { plan: { state: "ready" } },
            events: [{ type: "no_such_event" } as unknown as PipelineEvent],
          }),
        ),
      ).toBe("pipeline_input_invalid");
      expect(await store.listEvents(runId)).toEqual([]);
      expect((await store.getRunNodes(runId))[0]!.state).toBe("pending");
      expect(
        await codeOf(() => store.appendEvents(runId, "someone-else", [{ type: "supervision", on: true }])),
      ).toBe("pipeline_lease_not_held");
      expect(await store.listEvents(runId)).toEqual([]);
    });

    it("records attempts: started once, ended once, with the outcome's record", async () => {
      const { store, clock } = fx();
      const runId = await leasedRun();
      const startedAt = new Date(clock.now()).toISOString();
      await store.updateRun(runId, "driver", {
        nodes: { plan: { state: "launching", attempts: 1 } },
        startAttempts: [{ node_id: "plan", attempt: 1, prompt: "Plan t" }],
        events: [{ type: "attempt_started", node_id: "plan", attempt: 1 }],
      });
      expect(await store.listAttempts(runId)).toEqual([
        {
          run_id: runId,
          node_id: "plan",
          attempt: 1,
          prompt: "Plan t",
          status: "running",
          started_at: startedAt,
          ended_at: null,
          session_ref: null,
          corrections: 0,
          transcript: null,
          usage: null,
          handoff: null,
          reason: null,
          error: null,
        },
      ]);
      expect(
        await codeOf(() =>
          store.updateRun(runId, "driver", {
            startAttempts: [{ node_id: "plan", attempt: 1, prompt: "again" }],
          }),
        ),
      ).toBe("pipeline_input_invalid");
      clock.advance(1000);
      const end = {
        node_id: "plan",
        attempt: 1,
        status: "succeeded" as const,
        session_ref: "s-1",
        corrections: 2,
        transcript: "nodes/plan/attempt-1/transcript.jsonl",
        usage: { input_tokens: 10, output_tokens: 5 },
        handoff: { summary: "planned" },
        reason: null,
        error: null,
      };
      await store.updateRun(runId, "driver", { nodes: { plan: { state: "succeeded" } }, endAttempts: [end] });
      const [attempt] = await store.listAttempts(runId, { node_id: "plan" });
      expect(NodeAttemptSchema.parse(attempt)).toEqual(attempt);
      expect(attempt).toMatchObject({
        ...end,
        prompt: "Plan t",
        ended_at: new Date(clock.now()).toISOString(),
      });
      expect(await codeOf(() => store.updateRun(runId, "driver", { endAttempts: [end] }))).toBe(
        "pipeline_input_invalid",
      );
      expect(
        await codeOf(() => store.updateRun(runId, "driver", { endAttempts: [{ ...end, attempt: 2 }] })),
      ).toBe("pipeline_input_invalid");
      expect(await store.listAttempts(runId, { node_id: "build" })).toEqual([]);
    });
  });
}
