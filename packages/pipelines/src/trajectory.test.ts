import { describe, expect, it } from "vitest";
import { PipelineDefinitionSchema } from "./definition";
import type { NodeAttempt } from "./run/events";
import type { PipelineRun, RunNode } from "./store/records";
import { PipelineTrajectorySchema, pipelinePerfetto, pipelineTrajectory } from "./trajectory";

const RUN_ID = "a".repeat(32);
const definition = PipelineDefinitionSchema.parse({
  name: "Two",
  nodes: [
    { id: "a", name: "A", prompt_template: "x" },
    { id: "b", name: "B", prompt_template: "y", depends_on: ["a"] },
  ],
});
const run: PipelineRun = {
  run_id: RUN_ID,
  definition_id: "two",
  definition_revision: 2,
  definition,
  task_input: "t",
  state: "running",
  failure_policy: "pause",
  created_at: "2026-01-01T00:00:00.000Z",
  started_at: "2026-01-01T00:00:01.000Z",
  ended_at: null,
  updated_at: "2026-01-01T00:00:05.000Z",
};
const node = (node_id: string, state: RunNode["state"], attempts: number): RunNode => ({
  run_id: RUN_ID,
  node_id,
  state,
  attempts,
  handoff: null,
  session_ref: null,
  approval_granted: false,
  error: null,
  updated_at: run.updated_at,
});
const attempt = (
  node_id: string,
  n: number,
  status: NodeAttempt["status"],
  start: string,
  end: string | null,
): NodeAttempt => ({
  run_id: RUN_ID,
  node_id,
  attempt: n,
  prompt: "p",
  status,
  started_at: start,
  ended_at: end,
  session_ref: null,
  corrections: 0,
  transcript: null,
  usage: null,
  handoff: null,
  reason: null,
  error: status === "interrupted" ? { code: "pipeline_driver_lost", message: "driver lost" } : null,
});

describe("pipelineTrajectory and pipelinePerfetto", () => {
  const attempts = [
    attempt("a", 2, "succeeded", "2026-01-01T00:00:03.000Z", "2026-01-01T00:00:04.000Z"),
    attempt("a", 1, "interrupted", "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.500Z"),
    attempt("b", 1, "running", "2026-01-01T00:00:04.000Z", null),
  ];
  const trajectory = pipelineTrajectory(run, [node("a", "succeeded", 2), node("b", "running", 1)], attempts);

  it("gives each node its attempts in order with their timing, and the run's", () => {
    expect(PipelineTrajectorySchema.parse(trajectory)).toEqual(trajectory);
    expect(trajectory.run).toMatchObject({ name: "Two", state: "running", duration_ms: null });
    expect(trajectory.nodes[0]).toMatchObject({
      node_id: "a",
      name: "A",
      depends_on: [],
      start_ms: Date.parse("2026-01-01T00:00:01.000Z"),
      duration_ms: 3000,
    });
    expect(trajectory.nodes[0]!.attempts.map((a) => [a.attempt, a.status, a.duration_ms])).toEqual([
      [1, "interrupted", 1500],
      [2, "succeeded", 1000],
    ]);
    expect(trajectory.nodes[1]).toMatchObject({ depends_on: ["a"], end_ms: null, duration_ms: null });
  });

  it("draws a run track and a track per node, an open attempt ending now", () => {
    const now = Date.parse("2026-01-01T00:00:06.000Z");
    const trace = pipelinePerfetto(trajectory, now);
    const slices = trace.traceEvents.filter((e) => e.ph === "X");
    expect(slices.map((e) => [e.name, e.tid, e.dur])).toEqual([
      ["Two", 0, 5_000_000],
      ["a #1", 1, 1_500_000],
      ["a #2", 1, 1_000_000],
      ["b #1", 2, 2_000_000],
    ]);
    expect(slices[1]?.args).toMatchObject({ error: "driver lost [pipeline_driver_lost]" });
  });
});
