/**
 * @module @icode/workflow-scheduler/testing
 * Helpers for tests of code built on the scheduler: small Definition builders, scriptable fake executors on a
 * virtual clock, a recording sink, and a driver that moves virtual time until a run settles.
 *
 * @example
 * import { chainDef, harness } from "@icode/workflow-scheduler/testing";
 * const h = harness(chainDef(["a", "b"]));
 * const result = await h.finish(); // → { outcome: "completed", … }
 */
import type { Definition, Edge, EdgeCondition, WorkflowNode } from "@icode/workflow-graph";
import {
  type EngineEvent,
  type EngineEventOf,
  EngineEventSchema,
  type EngineEventType,
  type RecordSink,
} from "./events";
import type {
  AgentAttemptRequest,
  AttemptIO,
  AttemptResult,
  CombineRequest,
  ConditionBatch,
  Executors,
  PythonAttemptRequest,
} from "./executor";
import type { RunOptions, WorkflowRun } from "./options";
import type { RunResult } from "./result";
import { startRun } from "./run";
import type { SourceValue, WorkflowValue } from "./value";
import { createVirtualClock, type VirtualClock } from "./virtual-clock";

// ------------------------------------------------------------------ Definition builders

type NodeOptions = {
  scope?: string | null;
  timeout?: number | null;
  retry?: { max_attempts: number; backoff: number } | null;
};

export function py(id: string, options: NodeOptions = {}): WorkflowNode {
  return {
    id,
    kind: "python",
    scope: options.scope ?? null,
    site: null,
    timeout: options.timeout === undefined ? 300 : options.timeout,
    retry: options.retry ?? null,
    is_async: false,
    takes_context: true,
  };
}

export function agent(id: string, options: NodeOptions = {}): WorkflowNode {
  return {
    id,
    kind: "agent",
    scope: options.scope ?? null,
    site: null,
    profile: "default",
    model: null,
    instructions_suffix: null,
    timeout: options.timeout ?? null,
    retry: options.retry ?? null,
  };
}

export function loop(
  id: string,
  entry: string,
  exit: string,
  options: { max_iterations?: number; on_exhausted?: "continue" | "fail" } = {},
): WorkflowNode {
  return {
    id,
    kind: "loop",
    scope: null,
    site: null,
    entry,
    exit,
    max_iterations: options.max_iterations ?? 10,
    on_exhausted: options.on_exhausted ?? "continue",
  };
}

export function join(
  target: string,
  sources: string[],
  options: { combine?: boolean; scope?: string | null } = {},
): WorkflowNode {
  return {
    id: `join:${target}`,
    kind: "join",
    scope: options.scope ?? null,
    site: null,
    sources,
    target,
    has_combine: options.combine ?? false,
  };
}

export function edge(
  source: string,
  target: string,
  condition: EdgeCondition = null,
  scope: string | null = null,
): Edge {
  return { source, target, scope, condition, site: null };
}
export const when = (source: string, target: string, scope: string | null = null) =>
  edge(source, target, { kind: "when" }, scope);
export const kase = (source: string, target: string, index: number) =>
  edge(source, target, { kind: "case", index });
export const fallback = (source: string, target: string) => edge(source, target, { kind: "default" });

export function def(parts: {
  start: string;
  outputs: string[];
  nodes: WorkflowNode[];
  edges?: Edge[];
}): Definition {
  return {
    format: 1,
    title: "Test",
    description: null,
    start: parts.start,
    outputs: parts.outputs,
    nodes: parts.nodes,
    edges: parts.edges ?? [],
    build_site: null,
    sites_truncated: false,
  };
}

/** `a → b → c …` python chain definition. */
export function chainDef(ids: string[]): Definition {
  return def({
    start: ids[0]!,
    outputs: [ids[ids.length - 1]!],
    nodes: ids.map((id) => py(id)),
    edges: ids.slice(1).map((id, i) => edge(ids[i]!, id)),
  });
}

// ------------------------------------------------------------------ fake executors

/** Thrown by a fake node function to fail with a given class and retryability. */
export class FakeFailure extends Error {
  constructor(
    readonly cls: string,
    readonly retryable: boolean,
    message = `${cls} raised`,
  ) {
    super(message);
  }
}

export interface FakeContext {
  readonly nodeId: string;
  readonly activationId: string;
  readonly attempt: number;
  readonly iteration: number;
  readonly signal: AbortSignal;
  readonly io: AttemptIO;
  readonly continueFrom: number | null;
  /** Virtual sleep; resolves `false` if the attempt was aborted. */
  sleep(ms: number): Promise<boolean>;
}

export type FakeFn = (
  input: WorkflowValue,
  ctx: FakeContext,
) => WorkflowValue | string | Promise<WorkflowValue | string>;

export interface FakeScript {
  /** Node functions for Python and agent nodes; unscripted nodes return `{ text: <node id>, data: null }`. */
  nodes?: Record<string, FakeFn>;
  /** Conditions by edge key; throw to raise. Unscripted conditions are true. */
  conditions?: Record<string, (value: WorkflowValue) => boolean | Promise<boolean>>;
  until?: Record<string, (value: WorkflowValue, iteration: number) => boolean | Promise<boolean>>;
  combine?: Record<
    string,
    (sources: readonly SourceValue[]) => WorkflowValue | string | Promise<WorkflowValue | string>
  >;
  /** Python results carry their edge decisions (one round trip). */
  batch?: boolean;
}

export interface CallRecord {
  readonly kind: "python" | "agent" | "conditions" | "until" | "combine" | "condition";
  readonly id: string;
  readonly activationId: string;
  readonly attempt: number;
  readonly at: number;
}

export interface Fakes {
  readonly executors: Required<Executors>;
  readonly calls: CallRecord[];
  readonly requests: (PythonAttemptRequest | AgentAttemptRequest)[];
  /** The abort signal of a node's attempt (read after the fact: an aborted call yields an aborted signal). */
  signal(nodeId: string, attempt?: number): AbortSignal | undefined;
  /** Highest number of simultaneously running attempts, per kind. */
  readonly maxActive: { python: number; agent: number };
}

const toValue = (out: WorkflowValue | string): WorkflowValue =>
  typeof out === "string" ? { text: out, data: null } : out;

function failure(
  error: unknown,
  fallbackClass: string,
): { class: string; message: string; retryable: boolean; traceback: null } {
  if (error instanceof FakeFailure)
    return { class: error.cls, message: error.message, retryable: error.retryable, traceback: null };
  return {
    class: fallbackClass,
    message: error instanceof Error ? error.message : String(error),
    retryable: fallbackClass === "exception",
    traceback: null,
  };
}

export function createFakes(clock: VirtualClock, script: FakeScript = {}): Fakes {
  const calls: CallRecord[] = [];
  const requests: (PythonAttemptRequest | AgentAttemptRequest)[] = [];
  const ios: AttemptIO[] = [];
  const active = { python: 0, agent: 0 };
  const maxActive = { python: 0, agent: 0 };

  async function evaluate(
    batch: ConditionBatch,
    value: WorkflowValue,
    activationId: string,
  ): Promise<string[]> {
    const passed: string[] = [];
    const test = async (key: string) => {
      calls.push({ kind: "condition", id: key, activationId, attempt: 0, at: clock.now() });
      const fn = script.conditions?.[key];
      return fn === undefined ? true : await fn(value);
    };
    for (const key of batch.when) if (await test(key)) passed.push(key);
    if (batch.switch !== null) {
      let selected = batch.switch.default;
      for (const key of batch.switch.cases) {
        if (await test(key)) {
          selected = key;
          break;
        }
      }
      passed.push(selected);
    }
    return passed;
  }

  async function attempt(
    kind: "python" | "agent",
    request: PythonAttemptRequest | AgentAttemptRequest,
    io: AttemptIO,
  ): Promise<AttemptResult> {
    requests.push(request);
    ios.push(io);
    calls.push({
      kind,
      id: request.node.id,
      activationId: request.activationId,
      attempt: request.attempt,
      at: clock.now(),
    });
    active[kind]++;
    maxActive[kind] = Math.max(maxActive[kind], active[kind]);
    try {
      const fn = script.nodes?.[request.node.id];
      const ctx: FakeContext = {
        nodeId: request.node.id,
        activationId: request.activationId,
        attempt: request.attempt,
        iteration: request.iteration,
        signal: io.signal,
        io,
        continueFrom: "continueFrom" in request ? request.continueFrom : null,
        sleep: (ms) => clock.sleep(ms, io.signal),
      };
      let value: WorkflowValue;
      try {
        value = toValue(fn === undefined ? request.node.id : await fn(request.input, ctx));
      } catch (error) {
        return { status: "failed", error: failure(error, "exception"), phase: "node" };
      }
      if (
        kind === "python" &&
        script.batch === true &&
        "conditions" in request &&
        request.conditions !== null
      ) {
        io.conditionsStarted();
        try {
          return {
            status: "completed",
            value,
            decisions: { passed: await evaluate(request.conditions, value, request.activationId) },
          };
        } catch (error) {
          return { status: "failed", error: failure(error, "condition_failed"), phase: "conditions" };
        }
      }
      return { status: "completed", value };
    } finally {
      active[kind]--;
    }
  }

  const executors: Required<Executors> = {
    runPython: (request, io) => attempt("python", request, io),
    runAgent: (request, io) => attempt("agent", request, io),
    async evaluateConditions(request) {
      calls.push({
        kind: "conditions",
        id: request.nodeId,
        activationId: request.activationId,
        attempt: 0,
        at: clock.now(),
      });
      try {
        return {
          status: "decided",
          decisions: { passed: await evaluate(request.conditions, request.value, request.activationId) },
        };
      } catch (error) {
        return { status: "failed", error: failure(error, "condition_failed") };
      }
    },
    async evaluateUntil(request) {
      calls.push({
        kind: "until",
        id: request.node.id,
        activationId: request.activationId,
        attempt: request.iteration,
        at: clock.now(),
      });
      const fn = script.until?.[request.node.id];
      try {
        return {
          status: "decided",
          stop: fn === undefined ? true : await fn(request.value, request.iteration),
        };
      } catch (error) {
        return { status: "failed", error: failure(error, "until_failed") };
      }
    },
    async combine(request: CombineRequest) {
      calls.push({
        kind: "combine",
        id: request.node.id,
        activationId: request.activationId,
        attempt: 0,
        at: clock.now(),
      });
      const fn = script.combine?.[request.node.id];
      try {
        return {
          status: "completed",
          value: toValue(
            fn === undefined ? request.sources.map((s) => s.value.text).join("+") : await fn(request.sources),
          ),
        };
      } catch (error) {
        return { status: "failed", error: failure(error, "combine_failed") };
      }
    },
  };
  const signal = (nodeId: string, attempt = 1) => {
    const i = requests.findIndex((r) => r.node.id === nodeId && r.attempt === attempt);
    return i < 0 ? undefined : ios[i]!.signal;
  };
  return { executors, calls, requests, maxActive, signal };
}

// ------------------------------------------------------------------ sink and driver

export interface RecordingSink extends RecordSink {
  readonly events: EngineEvent[];
  of<T extends EngineEventType>(type: T): EngineEventOf<T>[];
  types(): string[];
}

export function recordingSink(
  options: { validate?: boolean; failAt?: number; error?: Error } = {},
): RecordingSink {
  const events: EngineEvent[] = [];
  const validate = options.validate ?? true;
  return {
    events,
    write(event) {
      if (options.failAt !== undefined && events.length >= options.failAt)
        throw options.error ?? new Error("disk full");
      if (validate) EngineEventSchema.parse(event);
      events.push(event);
    },
    of: <T extends EngineEventType>(type: T) => events.filter((e): e is EngineEventOf<T> => e.type === type),
    types: () => events.map((e) => e.type),
  };
}

/** Lets pending promise callbacks run (one macrotask turn). */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Moves virtual time timer by timer until `promise` settles; throws if nothing is left to fire. */
export async function drive<T>(clock: VirtualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (;;) {
    await flush();
    if (settled) return promise;
    if (!clock.next()) throw new Error("the run is stuck: it has not ended and no timer is armed");
  }
}

/** Fires timers until none is armed and nothing else happens (for runs that wait on a control call). */
export async function idle(clock: VirtualClock): Promise<void> {
  for (;;) {
    await flush();
    if (!clock.next()) {
      await flush();
      return;
    }
  }
}

export interface Harness {
  readonly clock: VirtualClock;
  readonly fakes: Fakes;
  readonly sink: RecordingSink;
  readonly run: WorkflowRun;
  /** Drives virtual time to the end of the run. */
  finish(): Promise<RunResult>;
}

export function harness(
  definition: Definition,
  script: FakeScript = {},
  options: Partial<Omit<RunOptions, "definition" | "executors" | "clock" | "sink">> & {
    sink?: RecordingSink;
    /** Executors to use instead of the fakes'. */
    patch?: Partial<Executors>;
  } = {},
): Harness {
  const clock = createVirtualClock(1_000);
  const fakes = createFakes(clock, script);
  const sink = options.sink ?? recordingSink();
  const { patch, ...rest } = options;
  const run = startRun({
    runId: "0123456789abcdef0123456789abcdef",
    input: { text: "in", data: null },
    ...rest,
    definition,
    executors: { ...fakes.executors, ...patch },
    clock,
    sink,
  });
  return { clock, fakes, sink, run, finish: () => drive(clock, run.result) };
}
