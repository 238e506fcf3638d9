/**
 * `engine.pipelines` runs: start, drive (the driver of @icode/pipelines with the engine's executor, here the
 * scripted one of @icode/pipelines/testing), runs, inspect, subscribe (replay then live) and the control
 * actions, on a real SQLite file; and a run refused for a draft, and driving without an executor.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { StoredPipelineEvent } from "@icode/pipelines";
import { PipelineTrajectorySchema } from "@icode/pipelines";
import { ScriptedExecutor } from "@icode/pipelines/testing";
import { tmpDir } from "@icode/test-utils";
import { PerfettoTraceSchema } from "@icode/workflow-records";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine, PipelineRunInspectionSchema, pipelineRunDir } from "../src/index";

const DEFINITION = {
  name: "Gated",
  nodes: [
    { id: "plan", name: "Plan", prompt_template: "Plan {{task}}" },
    {
      id: "build",
      name: "Build",
      prompt_template: "Build {{upstream.plan.summary}}",
      depends_on: ["plan"],
      requires_approval: true,
    },
  ],
};

const engines: Engine[] = [];
async function setup(executor?: ScriptedExecutor) {
  const cwd = tmpDir();
  const home = join(cwd, ".home");
  const engine = createEngine({
    cwd,
    env: { CHRYS_HOME: home },
    homeDir: join(cwd, "home"),
    ...(executor === undefined ? {} : { pipelineExecutor: executor }),
  });
  engines.push(engine);
  const draft = await engine.pipelines.import({ text: JSON.stringify(DEFINITION) }, { id: "gated" });
  return { cwd, home, engine, draft };
}

afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

describe("engine.pipelines runs", () => {
  it("refuses to start a draft, then runs the published definition through its gate", async () => {
    const executor = new ScriptedExecutor();
    const { engine, home } = await setup(executor);
    await expect(engine.pipelines.start({ definitionId: "gated", taskInput: "x" })).rejects.toMatchObject({
      code: "pipeline_definition_draft",
    });
    await engine.pipelines.publish("gated");
    const run = await engine.pipelines.start({ definitionId: "gated", taskInput: "ship it" });
    expect(run).toMatchObject({ state: "pending", failure_policy: "pause", task_input: "ship it" });
    expect((await engine.pipelines.runs()).map((r) => r.run_id)).toEqual([run.run_id]);

    const seen: StoredPipelineEvent[] = [];
    const driving = engine.pipelines.drive(run.run_id, { onEvent: (e) => seen.push(e) });
    // The gate waits: the driver keeps reading commands until a person acts; cancel it from the store.
    while (!seen.some((e) => e.event.type === "node_state" && e.event.to === "waiting_approval")) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await engine.pipelines.cancel(run.run_id)).result).toEqual({ ok: true });
    const result = await driving;
    expect(result).toMatchObject({ stop: "converged", run: { state: "canceled" } });
    expect(executor.callsOf("plan").length).toBe(1);
    expect(executor.callsOf("build").length).toBe(0);
    expect(existsSync(join(pipelineRunDir(home, run.run_id), "events.jsonl"))).toBe(true);
    // Approve after cancel is refused.
    const late = await engine.pipelines.approve(run.run_id, "build");
    expect(late.result).toMatchObject({ ok: false, code: "pipeline_action_not_allowed" });
  });

  it("inspects a run, controls it through the store, and replays then follows its events", async () => {
    const executor = new ScriptedExecutor();
    const { engine } = await setup(executor);
    await engine.pipelines.publish("gated");
    const run = await engine.pipelines.start({ definitionId: "gated", taskInput: "t" });
    const driving = engine.pipelines.drive(run.run_id);
    // Wait until the gate is reached, then approve through the control API (the live driver applies it).
    for (;;) {
      const nodes = (await engine.pipelines.inspect(run.run_id)).nodes;
      if (nodes.find((n) => n.node_id === "build")?.state === "waiting_approval") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const approved = await engine.pipelines.approve(run.run_id, "build");
    expect(approved.result).toEqual({ ok: true });
    expect(approved.via).toBe("driver");
    const result = await driving;
    expect(result.stop).toBe("converged");
    expect(result.run.state).toBe("succeeded");
    expect(executor.callsOf("build").length).toBe(1);

    const inspection = await engine.pipelines.inspect(run.run_id);
    expect(PipelineRunInspectionSchema.parse(inspection)).toEqual(inspection);
    expect(inspection.nodes.map((n) => [n.node_id, n.state, n.attempts])).toEqual([
      ["plan", "succeeded", 1],
      ["build", "succeeded", 1],
    ]);
    expect(inspection.attempts.map((a) => [a.node_id, a.status])).toEqual([
      ["plan", "succeeded"],
      ["build", "succeeded"],
    ]);
    expect(inspection.commands.map((c) => c.command.action)).toEqual(["approve_node"]);

    // A finished run: pause is refused with the transition table's code, as a result.
    const pause = await engine.pipelines.pause(run.run_id);
    expect(pause.result).toMatchObject({ ok: false, code: "pipeline_action_not_allowed" });
    expect(pause.via).toBe("direct");

    const all: StoredPipelineEvent[] = [];
    const sub = await engine.pipelines.subscribe(run.run_id, (e) => all.push(e));
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)?.event.type).toBeDefined();
    const from = all.length - 1;
    const tail: StoredPipelineEvent[] = [];
    const sub2 = await engine.pipelines.subscribe(run.run_id, (e) => tail.push(e), { fromSeq: from });
    expect(tail.map((e) => e.seq)).toEqual([from, from + 1]);
    // Live: a refused action of a finished run is recorded as an event, and arrives.
    await engine.pipelines.cancel(run.run_id);
    const deadline = Date.now() + 3000;
    while (all.length <= from + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(all.length).toBeGreaterThan(from + 1);
    expect(all.at(-1)?.event).toMatchObject({ type: "command_refused", command: { action: "cancel" } });
    await sub.close();
    await sub2.close();

    // The trajectory export: the run, its nodes and their attempts, as JSON and as a Perfetto trace.
    const trajectory = PipelineTrajectorySchema.parse(
      await engine.pipelines.exportTrajectory(run.run_id, "json"),
    );
    expect(trajectory.run).toMatchObject({ run_id: run.run_id, state: "succeeded", definition_id: "gated" });
    expect(trajectory.nodes.map((n) => [n.node_id, n.attempts.map((a) => a.status)])).toEqual([
      ["plan", ["succeeded"]],
      ["build", ["succeeded"]],
    ]);
    expect(trajectory.nodes[1]?.depends_on).toEqual(["plan"]);
    expect(trajectory.nodes[0]?.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(0);
    const trace = PerfettoTraceSchema.parse(await engine.pipelines.exportTrajectory(run.run_id, "perfetto"));
    const slices = trace.traceEvents.filter((e) => e.ph === "X").map((e) => e.name);
    expect(slices).toEqual(["Gated", "plan #1", "build #1"]);
  });

  it("creates and controls runs through the store without driving them", async () => {
    const { engine } = await setup(new ScriptedExecutor());
    await engine.pipelines.publish("gated");
    const run = await engine.pipelines.start({ definitionId: "gated", taskInput: "t" });
    const paused = await engine.pipelines.pause(run.run_id);
    expect(paused).toMatchObject({ result: { ok: true }, via: "direct", needsDriver: false });
    expect((await engine.pipelines.inspect(run.run_id)).run.state).toBe("paused");
    const resumed = await engine.pipelines.resume(run.run_id);
    expect(resumed).toMatchObject({ result: { ok: true }, needsDriver: true });
    await expect(engine.pipelines.inspect("0".repeat(32))).rejects.toMatchObject({
      code: "pipeline_run_not_found",
    });
  });
});
