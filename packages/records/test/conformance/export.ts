import { describe, expect, it } from "vitest";
import type { TraceEvent } from "../../src/export/perfetto";
import { PerfettoTraceSchema, TrajectorySchema } from "../../src/index";
import { runInit, scriptedEvents, sessionInit } from "./fixtures";
import { finish, useFixture } from "./harness";
import type { StoreFixture } from "./index";

const T0 = 1_700_000_000_000;

export function exportConformance(name: string, init: () => Promise<StoreFixture>): void {
  describe(`${name}: trajectory export`, () => {
    const fx = useFixture(init);

    async function session() {
      const { store, workspace } = fx();
      const s = await store.createSession(sessionInit(workspace));
      const done = await store.createRun(s.session_id, runInit({ run_id: "1".repeat(32) }));
      for (const event of scriptedEvents(done.runId, { t0: T0 })) done.write(event);
      await finish(done, { outputs: [], output: {} });
      const cut = await store.createRun(s.session_id, runInit({ run_id: "2".repeat(32) }));
      for (const event of scriptedEvents(cut.runId, { t0: T0 + 1000, end: false })) cut.write(event);
      await cut.close();
      return { store, sessionId: s.session_id };
    }

    it("exports runs, activations, attempts, timings and usage as JSON", async () => {
      const { store, sessionId } = await session();
      const trajectory = await store.exportTrajectory(sessionId, "json");
      expect(TrajectorySchema.parse(trajectory)).toEqual(trajectory);
      expect(JSON.parse(JSON.stringify(trajectory))).toEqual(trajectory);
      expect(trajectory.session.session_id).toBe(sessionId);
      const [done, cut] = trajectory.runs;
      expect(done).toMatchObject({
        outcome: "completed",
        start_ms: T0,
        end_ms: T0 + 31,
        duration_ms: 31,
        usage: null,
      });
      expect(done?.nodes.map((n) => [n.activation_id, n.status, n.start_ms, n.end_ms])).toEqual([
        ["a@iter#1", "completed", T0 + 1, T0 + 20],
        ["b@iter#1", "completed", T0 + 21, T0 + 30],
      ]);
      expect(done?.nodes[0]?.attempts).toEqual([
        {
          attempt: 1,
          status: "failed",
          error_class: "exception",
          error: "ValueError: boom",
          start_ms: T0 + 2,
          end_ms: T0 + 10,
          duration_ms: 8,
          usage: null,
          tool_calls: [],
        },
        {
          attempt: 2,
          status: "completed",
          error_class: null,
          error: null,
          start_ms: T0 + 11,
          end_ms: T0 + 20,
          duration_ms: 9,
          usage: null,
          tool_calls: [],
        },
      ]);
      expect(done?.nodes[0]?.emits).toEqual([{ ts: T0 + 3, attempt: 1, text: "working on it" }]);
      expect(done?.nodes[0]?.questions[0]?.answer).toEqual({
        ts: T0 + 14,
        status: "answered",
        summary: "API, UI",
      });
      // The unfinished run: no outcome, no end; its open activation stays open.
      expect(cut).toMatchObject({ outcome: null, end_ms: null, duration_ms: null });
    });

    it("exports a Perfetto (Chrome trace-event) trace: tracks per node, nested slices, instants in µs", async () => {
      const { store, sessionId } = await session();
      const trace = await store.exportTrajectory(sessionId, "perfetto");
      expect(PerfettoTraceSchema.parse(trace)).toEqual(trace);
      const events = trace.traceEvents;
      const threadNames = events.filter((e) => e.ph === "M" && e.name === "thread_name");
      expect(
        threadNames.filter((e) => e.pid === 1).map((e) => [e.tid, (e.args as { name: string }).name]),
      ).toEqual([
        [0, "run"],
        [1, "a"],
        [2, "b"],
      ]);
      const slices = events.filter((e): e is Extract<TraceEvent, { ph: "X" }> => e.ph === "X");
      const attemptsOfA = slices.filter((e) => e.pid === 1 && e.cat === "attempt" && e.tid === 1);
      expect(attemptsOfA.map((e) => [e.ts, e.dur])).toEqual([
        [(T0 + 2) * 1000, 8000],
        [(T0 + 11) * 1000, 9000],
      ]);
      expect(events.filter((e) => e.ph === "i").map((e) => [e.pid, e.name])).toEqual([
        [1, "emit"],
        [1, "question"],
        [1, "answer"],
        [2, "emit"],
        [2, "question"],
        [2, "answer"],
      ]);
      // Slices on one track nest properly (no partial overlap), so the UI draws them as a stack.
      const tracks = new Map<string, typeof slices>();
      for (const slice of slices) {
        const key = `${slice.pid}/${slice.tid}`;
        tracks.set(key, [...(tracks.get(key) ?? []), slice]);
      }
      for (const track of tracks.values()) {
        for (const x of track) {
          for (const y of track) {
            if (x === y) continue;
            const disjoint = x.ts + x.dur <= y.ts || y.ts + y.dur <= x.ts;
            const xInY = x.ts >= y.ts && x.ts + x.dur <= y.ts + y.dur;
            const yInX = y.ts >= x.ts && y.ts + y.dur <= x.ts + x.dur;
            expect(disjoint || xInY || yInX).toBe(true);
          }
        }
      }
    });
  });
}
