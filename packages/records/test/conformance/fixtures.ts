import type { Definition } from "@icode/workflow-graph";
import type { EngineEvent } from "../../src/engine-events";
import type { RunInit, SessionInit } from "../../src/index";

/** An event before it is numbered (`Omit` applied to each member of the union). */
type Unsequenced = EngineEvent extends infer E ? (E extends unknown ? Omit<E, "seq"> : never) : never;

/** `a` (retried once, emits, asks) → `b`; `b` is the output. */
export const DEFINITION: Definition = {
  format: 1,
  title: "demo",
  description: null,
  start: "a",
  outputs: ["b"],
  nodes: [
    {
      id: "a",
      scope: null,
      site: null,
      kind: "python",
      timeout: null,
      retry: { max_attempts: 2, backoff: 0 },
      is_async: true,
      takes_context: true,
    },
    {
      id: "b",
      scope: null,
      site: null,
      kind: "python",
      timeout: 5,
      retry: null,
      is_async: false,
      takes_context: false,
    },
  ],
  edges: [{ source: "a", target: "b", scope: null, condition: null, site: null }],
  build_site: null,
  sites_truncated: false,
};

export function sessionInit(workspace: string, overrides: Partial<SessionInit> = {}): SessionInit {
  return {
    workflow_id: "demo",
    workflow_path: `${workspace}/.chrys/workflows/demo.py`,
    source: "global",
    workspace,
    ...overrides,
  };
}

export function runInit(overrides: Partial<RunInit> = {}): RunInit {
  return {
    definition: DEFINITION,
    environment: { interpreter: "/usr/bin/python3", python_version: "3.11.9", fingerprint: "ab12" },
    input: { text: "hello", data: { lang: "en" } },
    source: { files: [{ path: "demo.py", content: "print('hi')\n" }] },
    engine_version: "0.1.0-test",
    ...overrides,
  };
}

const LONG = "Which areas? ".repeat(60); // 780 characters

/** The full questions of the ask in `scriptedEvents`: longer than any summary, kept whole beside the log. */
export const QUESTIONS = [
  {
    question: LONG,
    header: "Areas",
    options: [
      { label: "API", description: "the HTTP API" },
      { label: "UI", description: "" },
    ],
    multi_select: true,
  },
];

/**
 * A realistic event stream for one run, `t0` the first timestamp (ms). With `end: false` it stops after
 * `a` completed, as if the process died.
 */
export function scriptedEvents(runId: string, options: { t0?: number; end?: boolean } = {}): EngineEvent[] {
  const t = options.t0 ?? 1_700_000_000_000;
  const a = { run_id: runId, node_id: "a", activation_id: "a@iter#1", iteration: 1, loop_id: null };
  const b = { run_id: runId, node_id: "b", activation_id: "b@iter#1", iteration: 1, loop_id: null };
  const events: Unsequenced[] = [
    {
      type: "workflow_run_start",
      run_id: runId,
      ts: t,
      title: "demo",
      start: "a",
      input: { text: "hello", data: { lang: "en" } },
      policy: "fail",
      deadline: null,
      node_count: 2,
      edge_count: 1,
      outputs: ["b"],
    },
    {
      ...a,
      type: "node_started",
      ts: t + 1,
      kind: "python",
      input: { text: "hello", data: { lang: "en" } },
      sources: [],
    },
    { ...a, type: "attempt_started", ts: t + 2, attempt: 1, max_attempts: 2, timeout_ms: null },
    { ...a, type: "emit", ts: t + 3, attempt: 1, text: "working on it" },
    {
      ...a,
      type: "attempt_failed",
      ts: t + 10,
      attempt: 1,
      error: { class: "exception", message: "ValueError: boom", retryable: true, traceback: "Traceback…" },
      phase: "node",
      will_retry: true,
      retry_delay_ms: 0,
    },
    { ...a, type: "attempt_started", ts: t + 11, attempt: 2, max_attempts: 2, timeout_ms: null },
    {
      ...a,
      type: "question",
      ts: t + 12,
      attempt: 2,
      question_id: 1,
      ask_id: "a@iter#1/2/1",
      summary: LONG,
      questions: QUESTIONS,
    },
    {
      ...a,
      type: "answer",
      ts: t + 14,
      attempt: 2,
      question_id: 1,
      ask_id: "a@iter#1/2/1",
      status: "answered",
      summary: "API, UI",
    },
    {
      ...a,
      type: "node_completed",
      ts: t + 20,
      kind: "python",
      attempt: 2,
      value: { text: "A", data: { n: 1 } },
    },
    {
      ...b,
      type: "node_started",
      ts: t + 21,
      kind: "python",
      input: { text: "A", data: { n: 1 } },
      sources: ["a@iter#1"],
    },
    { ...b, type: "attempt_started", ts: t + 21, attempt: 1, max_attempts: 1, timeout_ms: 5000 },
    {
      ...b,
      type: "node_completed",
      ts: t + 30,
      kind: "python",
      attempt: 1,
      value: { text: "B", data: null },
    },
    {
      type: "workflow_run_end",
      run_id: runId,
      ts: t + 31,
      outcome: "completed",
      reason: "",
      node_id: "",
      error: "",
      activation_id: null,
      error_class: null,
      outputs: [{ node_id: "b", activation_id: "b@iter#1", text: "B", data: null }],
    },
  ];
  const kept = options.end === false ? events.slice(0, 9) : events;
  return kept.map((event, seq) => ({ ...event, seq }) as EngineEvent);
}

export const QUESTION_LENGTH = LONG.length;
