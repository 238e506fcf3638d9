import { z } from "zod";
import { ATTEMPT_STATUSES, type NodeAttempt } from "./run/events";
import { NODE_STATES, type PipelineRun, RUN_STATES, type RunNode } from "./store/records";

/**
 * A pipeline run as analysis JSON (`icode trajectory export` of a pipeline run): the run, and per node its
 * state and every attempt with its timing, outcome and record. Derived from the store's records of the run
 * (`getRun`, `getRunNodes`, `listAttempts`), never from a process.
 */
const TimingFields = {
  /** Milliseconds since the epoch, `null` when not known. */
  start_ms: z.number().nullable(),
  end_ms: z.number().nullable(),
  duration_ms: z.number().nullable(),
};

const TrajectoryAttemptSchema = z.strictObject({
  attempt: z.number().int().min(1),
  status: z.enum(ATTEMPT_STATUSES),
  ...TimingFields,
  session_ref: z.string().nullable(),
  corrections: z.number().int().min(0),
  transcript: z.string().nullable(),
  usage: z.record(z.string(), z.unknown()).nullable(),
  handoff: z.record(z.string(), z.unknown()).nullable(),
  reason: z.string().nullable(),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
});

const TrajectoryNodeSchema = z.strictObject({
  node_id: z.string(),
  name: z.string(),
  depends_on: z.array(z.string()),
  state: z.enum(NODE_STATES),
  ...TimingFields,
  attempts: z.array(TrajectoryAttemptSchema),
});

export const PipelineTrajectorySchema = z.strictObject({
  format: z.literal("icode-pipeline-trajectory"),
  version: z.literal(1),
  run: z.strictObject({
    run_id: z.string(),
    definition_id: z.string(),
    definition_revision: z.number().int().min(1),
    name: z.string(),
    state: z.enum(RUN_STATES),
    failure_policy: z.string(),
    task_input: z.string(),
    ...TimingFields,
  }),
  nodes: z.array(TrajectoryNodeSchema),
});
export type PipelineTrajectory = z.infer<typeof PipelineTrajectorySchema>;

const ms = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));
const timing = (start: number | null, end: number | null) => ({
  start_ms: start,
  end_ms: end,
  duration_ms: start === null || end === null ? null : end - start,
});

/** The trajectory of a run from its records. `nodes` in definition order, attempts by number. */
export function pipelineTrajectory(
  run: PipelineRun,
  nodes: readonly RunNode[],
  attempts: readonly NodeAttempt[],
): PipelineTrajectory {
  const byNode = new Map<string, NodeAttempt[]>();
  for (const a of attempts) byNode.set(a.node_id, [...(byNode.get(a.node_id) ?? []), a]);
  const defined = new Map(run.definition.nodes.map((n) => [n.id, n]));
  const runStart = ms(run.started_at ?? run.created_at);
  return {
    format: "icode-pipeline-trajectory",
    version: 1,
    run: {
      run_id: run.run_id,
      definition_id: run.definition_id,
      definition_revision: run.definition_revision,
      name: run.definition.name,
      state: run.state,
      failure_policy: run.failure_policy,
      task_input: run.task_input,
      ...timing(runStart, ms(run.ended_at)),
    },
    nodes: nodes.map((n) => {
      const own = (byNode.get(n.node_id) ?? []).sort((a, b) => a.attempt - b.attempt);
      const first = own[0];
      const last = own.at(-1);
      return {
        node_id: n.node_id,
        name: defined.get(n.node_id)?.name ?? n.node_id,
        depends_on: [...(defined.get(n.node_id)?.depends_on ?? [])],
        state: n.state,
        ...timing(
          first === undefined ? null : ms(first.started_at),
          last === undefined ? null : ms(last.ended_at),
        ),
        attempts: own.map((a) => ({
          attempt: a.attempt,
          status: a.status,
          ...timing(ms(a.started_at), ms(a.ended_at)),
          session_ref: a.session_ref,
          corrections: a.corrections,
          transcript: a.transcript,
          usage: a.usage,
          handoff: a.handoff,
          reason: a.reason,
          error: a.error,
        })),
      };
    }),
  };
}

/** One Chrome trace event (the JSON Object Format that ui.perfetto.dev and chrome://tracing open). */
export type PipelineTraceEvent =
  | {
      name: string;
      ph: "X";
      cat: string;
      pid: number;
      tid: number;
      ts: number;
      dur: number;
      args: Record<string, unknown>;
    }
  | { name: "process_name" | "thread_name"; ph: "M"; pid: number; tid: number; args: { name: string } };

/**
 * The trajectory as Chrome trace-event JSON: the run is a process (`run <id> (<state>)`), with a `run`
 * track holding one slice for the whole run and one track per node whose slices are its attempts (category
 * `attempt,<status>`). An attempt still open ends with the run (or now, for a run still going).
 * Times are microseconds.
 */
export function pipelinePerfetto(
  trajectory: PipelineTrajectory,
  now: number = Date.now(),
): { traceEvents: PipelineTraceEvent[]; displayTimeUnit: "ms" } {
  const pid = 1;
  const us = (t: number) => Math.round(t * 1000);
  const runEnd = trajectory.run.end_ms ?? now;
  const events: PipelineTraceEvent[] = [
    {
      name: "process_name",
      ph: "M",
      pid,
      tid: 0,
      args: { name: `run ${trajectory.run.run_id} (${trajectory.run.state})` },
    },
    { name: "thread_name", ph: "M", pid, tid: 0, args: { name: "run" } },
  ];
  if (trajectory.run.start_ms !== null) {
    events.push({
      name: trajectory.run.name,
      ph: "X",
      cat: "run",
      pid,
      tid: 0,
      ts: us(trajectory.run.start_ms),
      dur: us(Math.max(0, runEnd - trajectory.run.start_ms)),
      args: { state: trajectory.run.state, definition_id: trajectory.run.definition_id },
    });
  }
  trajectory.nodes.forEach((node, i) => {
    const tid = i + 1;
    events.push({ name: "thread_name", ph: "M", pid, tid, args: { name: node.node_id } });
    for (const a of node.attempts) {
      if (a.start_ms === null) continue;
      const end = a.end_ms ?? runEnd;
      events.push({
        name: `${node.node_id} #${a.attempt}`,
        ph: "X",
        cat: `attempt,${a.status}`,
        pid,
        tid,
        ts: us(a.start_ms),
        dur: us(Math.max(0, end - a.start_ms)),
        args: {
          status: a.status,
          corrections: a.corrections,
          ...(a.error === null ? {} : { error: `${a.error.message} [${a.error.code}]` }),
        },
      });
    }
  });
  return { traceEvents: events, displayTimeUnit: "ms" };
}
