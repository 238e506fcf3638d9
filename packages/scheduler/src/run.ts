import { SchedulerError } from "./errors";
import type { Executors } from "./executor";
import { buildGraphIndex, type GraphIndex } from "./graph-index";
import { DEFAULT_MAX_CONCURRENT_AGENTS } from "./limits";
import type { RunOptions, WorkflowRun } from "./options";
import { RunScheduler } from "./scheduler";

/**
 * Starts one run of a Definition and returns its handle at once; the run's first events are written before
 * `startRun` returns. Throws `SchedulerError` (`definition_invalid`, `executor_missing`, `options_invalid`)
 * when the run cannot start; everything after that is reported through events and `result`.
 */
export function startRun(options: RunOptions): WorkflowRun {
  const index = buildGraphIndex(options.definition);
  checkExecutors(index, options.executors);
  const approvals = new Set(options.approvals ?? []);
  for (const id of approvals) {
    const kind = index.byId.get(id)?.node.kind;
    if (kind !== "python" && kind !== "agent") {
      throw new SchedulerError(
        "options_invalid",
        `approvals names "${id}", which is not a Python or agent node of the Definition`,
      );
    }
  }
  const firstSeq = options.firstSeq ?? 0;
  if (!Number.isInteger(firstSeq) || firstSeq < 0) {
    throw new SchedulerError(
      "options_invalid",
      `firstSeq is ${firstSeq}; expected a whole number of at least 0`,
    );
  }
  const scheduler = new RunScheduler({
    options,
    index,
    policy: options.policy ?? "fail",
    approvals,
    agentLimit: checkLimit("maxConcurrentAgents", options.maxConcurrentAgents, DEFAULT_MAX_CONCURRENT_AGENTS),
    pythonLimit: checkLimit("maxConcurrentPython", options.maxConcurrentPython, Number.POSITIVE_INFINITY),
  });
  scheduler.start();
  return scheduler.handle();
}

function checkLimit(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)) return value;
  throw new SchedulerError("options_invalid", `${name} is ${value}; expected a whole number of at least 1`);
}

function checkExecutors(index: GraphIndex, executors: Executors): void {
  const need = (member: keyof Executors, why: string) => {
    if (typeof executors[member] !== "function") {
      throw new SchedulerError(
        "executor_missing",
        `the Definition has ${why} but no ${member} executor was given`,
        { hint: `pass executors.${member}` },
      );
    }
  };
  for (const n of index.nodes) {
    const node = n.node;
    if (node.kind === "python") need("runPython", `Python node "${n.id}"`);
    else if (node.kind === "agent") need("runAgent", `agent node "${n.id}"`);
    else if (node.kind === "loop") need("evaluateUntil", `loop "${n.id}"`);
    else if (node.has_combine) need("combine", `join "${n.id}" with combine`);
    if (n.conditions !== null) need("evaluateConditions", `conditional edges from "${n.id}"`);
  }
}
