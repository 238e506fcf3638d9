// The `pipelines` suite (issue 19): a JSON pipeline of ACP agent nodes in layers (the scripted ACP agent
// answering after 50 ms), driven by `drivePipelineRun` with the real node executor and the SQLite store,
// next to the same layers of bare ACP SDK clients, 10 at once, measured in rounds in one child process
// (children/pipeline-acp.mjs). Returns records as the other suites do: the subject's carries its `rounds`
// (subject_ms, floor_ms, and the store calls of each run), from which lib/pipeline-targets.mjs takes the
// median of the per-round ratios; the floor and the arithmetic ideal are records of their own.
import { join } from "node:path";
import { profileName, runAgentChild } from "./agent-suite.mjs";
import { count } from "./format.mjs";
import {
  PIPELINE_DELAY_MS,
  PIPELINE_FLOOR_ID,
  PIPELINE_ID,
  PIPELINE_IDEAL_ID,
  PIPELINE_WIDTH,
} from "./pipeline-rows.mjs";
import { record } from "./suites.mjs";

/** The pipeline row: its subject, its floor and the arithmetic ideal (or the subject's problem). */
export function pipelineSuite(ctx) {
  const { plan, versions } = ctx;
  const layers = plan.pipelineLayers;
  const width = PIPELINE_WIDTH;
  const nodes = layers * width;
  const subject = {
    id: PIPELINE_ID,
    group: "pipelines",
    label: `pipeline of ${count(nodes)} ACP agent nodes, ${layers} layers of ${width} (drivePipelineRun, the real node executor, SQLite store; agent answers in ${PIPELINE_DELAY_MS} ms)`,
    subject: `@icode/pipelines ${versions.pipelines} + @icode/workflow-agents ${versions.agents}`,
    cpu_profile: profileName(PIPELINE_ID),
    shape: "pipeline-layers",
    nodes,
    layers,
    width,
  };
  ctx.log(`pipelines: ${subject.label}`);
  // At most ~6 s a layer on each side (3.4 s measured on a loaded 2-core machine), rounds and warm-ups.
  const runs = plan.pipelineRounds + plan.pipelineWarmupRuns;
  const bound = Math.max(plan.boundS, Math.ceil(runs * 2 * layers * 6 + 60));
  const dir = join(ctx.tmp, profileName(PIPELINE_ID));
  const { report, peak, problem } = runAgentChild(
    ctx,
    "pipeline-acp.mjs",
    PIPELINE_ID,
    {
      runsDir: join(dir, "runs"),
      layers,
      width,
      delayMs: PIPELINE_DELAY_MS,
      rounds: plan.pipelineRounds,
      warmup: { runs: plan.pipelineWarmupRuns, budget_ms: plan.warmupBudgetS * 1000 },
    },
    bound,
  );
  if (problem) return [record({ ...subject, ...problem })];
  const rounds = report.rounds;
  return [
    record(
      { ...subject, peak_rss_kib: peak, rounds, floor_id: PIPELINE_FLOOR_ID },
      rounds.map((r) => r.subject_ms),
    ),
    record(
      {
        id: PIPELINE_FLOOR_ID,
        group: "pipelines",
        label: `↳ bare ACP SDK clients: ${layers} layers of ${width} at once (spawn, initialize, session/new, one prompt, exit)`,
        subject: `@agentclientprotocol/sdk ${versions.acp_sdk}`,
        shape: "pipeline-layers",
        nodes,
        floor_of: PIPELINE_ID,
      },
      rounds.map((r) => r.floor_ms),
    ),
    record(
      {
        id: PIPELINE_IDEAL_ID,
        group: "pipelines",
        label: `↳ arithmetic ideal: ${layers} × ${PIPELINE_DELAY_MS} ms + ${layers} × a bare session's start (alone, same rounds)`,
        subject: "arithmetic",
        nodes,
        note: "ignores that 10 agents start at once on this machine's cores, and their exits",
      },
      rounds.map((r) => layers * (PIPELINE_DELAY_MS + r.session_start_ms)),
    ),
  ];
}
