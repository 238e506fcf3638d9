import { z } from "zod";
import type { EngineEvent } from "../engine-events";
import { readSessionRuns, type TrajectoryRun } from "./trajectory";

/**
 * Chrome trace-event JSON (the "JSON Object Format"), which ui.perfetto.dev and chrome://tracing open:
 * one process per run, one thread (track) per node with `thread_name` metadata, complete slices (`X`) for
 * each activation and, nested inside, each attempt; instants (`i`) for `ctx.emit` messages, questions and
 * answers. Timestamps and durations are microseconds.
 */
const common = { name: z.string(), pid: z.number().int().min(1), tid: z.number().int().min(0) };

export const TraceEventSchema = z.discriminatedUnion("ph", [
  z.object({
    ...common,
    ph: z.literal("X"),
    cat: z.string(),
    ts: z.number(),
    dur: z.number().min(0),
    args: z.record(z.string(), z.json()),
  }),
  z.object({
    ...common,
    ph: z.literal("i"),
    cat: z.string(),
    s: z.literal("t"),
    ts: z.number(),
    args: z.record(z.string(), z.json()),
  }),
  z.object({
    ...common,
    ph: z.literal("M"),
    name: z.enum(["process_name", "process_sort_index", "thread_name", "thread_sort_index"]),
    args: z.union([z.object({ name: z.string() }), z.object({ sort_index: z.number().int() })]),
  }),
]);
export type TraceEvent = z.infer<typeof TraceEventSchema>;

export const PerfettoTraceSchema = z.object({
  traceEvents: z.array(TraceEventSchema),
  displayTimeUnit: z.literal("ms"),
});
export type PerfettoTrace = z.infer<typeof PerfettoTraceSchema>;

const us = (ms: number) => Math.round(ms * 1000);

/** The Perfetto trace of a session's runs. */
export function buildPerfettoTrace(sessionDirPath: string): PerfettoTrace {
  const { runs } = readSessionRuns(sessionDirPath);
  const traceEvents: TraceEvent[] = [];
  runs.forEach(({ run, events }, index) => {
    traceRun(run, events, index + 1, traceEvents);
  });
  return { traceEvents, displayTimeUnit: "ms" };
}

function traceRun(run: TrajectoryRun, events: readonly EngineEvent[], pid: number, out: TraceEvent[]): void {
  const lastTs = events.reduce((max, e) => Math.max(max, e.ts), run.start_ms ?? 0);
  const runEnd = run.end_ms ?? lastTs;
  const label = `run ${run.run_id} (${run.outcome ?? "unfinished"})`;
  out.push({ ph: "M", name: "process_name", pid, tid: 0, args: { name: label } });
  out.push({ ph: "M", name: "process_sort_index", pid, tid: 0, args: { sort_index: pid } });
  out.push({ ph: "M", name: "thread_name", pid, tid: 0, args: { name: "run" } });
  out.push({ ph: "M", name: "thread_sort_index", pid, tid: 0, args: { sort_index: 0 } });
  if (run.start_ms !== null) {
    out.push({
      ph: "X",
      name: label,
      cat: "run",
      pid,
      tid: 0,
      ts: us(run.start_ms),
      dur: us(Math.max(0, runEnd - run.start_ms)),
      args: {
        run_id: run.run_id,
        outcome: run.outcome,
        reason: run.reason,
        node_id: run.node_id,
        error: run.error,
      },
    });
  }
  const tids = new Map<string, number>();
  const tidOf = (nodeId: string) => {
    let tid = tids.get(nodeId);
    if (tid === undefined) {
      tid = tids.size + 1;
      tids.set(nodeId, tid);
      out.push({ ph: "M", name: "thread_name", pid, tid, args: { name: nodeId } });
      out.push({ ph: "M", name: "thread_sort_index", pid, tid, args: { sort_index: tid } });
    }
    return tid;
  };
  for (const node of run.nodes) {
    const tid = tidOf(node.node_id);
    if (node.start_ms === null) continue;
    const nodeEnd = node.end_ms ?? runEnd;
    out.push({
      ph: "X",
      name: node.activation_id,
      cat: `node,${node.kind ?? "unknown"}`,
      pid,
      tid,
      ts: us(node.start_ms),
      dur: us(Math.max(0, nodeEnd - node.start_ms)),
      args: {
        activation_id: node.activation_id,
        status: node.status,
        iteration: node.iteration,
        usage: node.usage,
      },
    });
    for (const attempt of node.attempts) {
      if (attempt.start_ms === null) continue;
      // Clamp into the activation so slices nest on the track.
      const from = Math.max(attempt.start_ms, node.start_ms);
      const to = Math.min(attempt.end_ms ?? nodeEnd, nodeEnd);
      out.push({
        ph: "X",
        name: `${node.node_id} attempt ${attempt.attempt}`,
        cat: "attempt",
        pid,
        tid,
        ts: us(from),
        dur: us(Math.max(0, to - from)),
        args: {
          activation_id: node.activation_id,
          attempt: attempt.attempt,
          status: attempt.status,
          error_class: attempt.error_class,
          error: attempt.error,
          usage: attempt.usage,
        },
      });
      // An agent's tool calls nest inside its attempt.
      for (const call of attempt.tool_calls) {
        const start = Math.min(Math.max(call.start_ms, from), to);
        const end = Math.min(call.end_ms ?? to, to);
        out.push({
          ph: "X",
          name: call.title === "" ? call.tool_call_id : call.title,
          cat: `tool,${call.tool_kind}`,
          pid,
          tid,
          ts: us(start),
          dur: us(Math.max(0, end - start)),
          args: {
            activation_id: node.activation_id,
            attempt: attempt.attempt,
            tool_call_id: call.tool_call_id,
            status: call.status,
          },
        });
      }
    }
    for (const emit of node.emits) {
      out.push({
        ph: "i",
        s: "t",
        name: "emit",
        cat: "emit",
        pid,
        tid,
        ts: us(emit.ts),
        args: { activation_id: node.activation_id, attempt: emit.attempt, text: emit.text },
      });
    }
    for (const q of node.questions) {
      out.push({
        ph: "i",
        s: "t",
        name: "question",
        cat: "question",
        pid,
        tid,
        ts: us(q.ts),
        args: {
          activation_id: node.activation_id,
          attempt: q.attempt,
          question_id: q.question_id,
          summary: q.summary,
        },
      });
      if (q.answer !== null) {
        out.push({
          ph: "i",
          s: "t",
          name: "answer",
          cat: "question",
          pid,
          tid,
          ts: us(q.answer.ts),
          args: {
            activation_id: node.activation_id,
            question_id: q.question_id,
            status: q.answer.status,
            summary: q.answer.summary,
          },
        });
      }
    }
  }
}
