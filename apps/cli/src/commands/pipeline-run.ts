// First: zod settles how it parses before any schema is built (see ../zod-jitless).
import "../zod-jitless";
import {
  type DriveResult,
  type EnginePipelines,
  PIPELINE_RUN_CODES,
  PIPELINE_STORE_CODES,
  type PipelineCommand,
  type PipelineControlResult,
  type PipelineRun,
  pipelinesFor,
  type RunNode,
} from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import type { ParsedCommand } from "../command-line/spec";
import type { PIPELINE_RUN, PIPELINE_SKIP, ValuesOf } from "../command-tree";
import { EXIT, exitCodeOfSignal, stopSignalOf } from "../exit-codes";
import { readInputFile } from "../input-file";
import type { CliIo } from "../io";
import type { CliErrorCode } from "../json/error";
import {
  PIPELINE_JSON_VERSION,
  type PipelineControlJson,
  type PipelineRunResultJson,
} from "../json/pipeline";
import { errorJsonLine } from "../render/error-json";
import { count, oneLine } from "../render/flatten";
import { pipelineProgressLine } from "../render/pipeline-progress";
import { shellQuote } from "../render/shell-quote";

/**
 * `icode pipeline run` and the run control actions (`approve|retry|skip|pause|resume|cancel|stop-sessions`):
 * they may drive a run in the foreground, so this bundle is the one that will carry the node executor.
 * Ctrl-C, SIGTERM and SIGHUP stop driving (the driver interrupts the running attempts and releases the
 * lease): the run stays resumable.
 */

/** A paused run needs a person: `icode pipeline run` (and a control action that drove) exits with this. */
export const EXIT_PAUSED = 3;

/**
 * The lease of a CLI driver: renewed every third of it, so a killed `icode pipeline run` is taken over by
 * `icode pipeline resume` at most this long after it died.
 */
const LEASE_TTL_MS = 10_000;

const KNOWN: ReadonlySet<string> = new Set([...PIPELINE_STORE_CODES, ...PIPELINE_RUN_CODES]);

const HINTS: Record<string, (id: string) => string> = {
  pipeline_definition_not_found: () => "list the stored pipelines with: icode pipeline list",
  pipeline_run_not_found: () => "list the pipeline runs with: icode pipeline runs",
  pipeline_definition_draft: (id) => `publish it first: icode pipeline publish ${shellQuote(id)}`,
  pipeline_node_not_found: (id) => `see the run's nodes with: icode pipeline inspect ${shellQuote(id)}`,
};

function fail(io: CliIo, json: boolean, error: unknown, id: string): number {
  const raw = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const known = typeof raw === "string" && KNOWN.has(raw);
  const code = (known ? raw : "internal_error") as CliErrorCode;
  const own = (error as { hint?: unknown }).hint;
  const hint =
    HINTS[code]?.(id) ??
    (typeof own === "string"
      ? own
      : known
        ? null
        : "this is a defect of icode; please report it with the command line and the stderr output");
  io.stderr.write(
    `icode: ${oneLine(message)} [${code}]\n${hint === null ? "" : `  help: ${oneLine(hint)}\n`}`,
  );
  if (json) io.stdout.write(errorJsonLine({ code, message, hint }));
  return EXIT.failed;
}

const withoutDefinition = ({ definition: _snapshot, ...run }: PipelineRun) => run;

function summaryLine(run: PipelineRun, nodes: readonly RunNode[]): string {
  const done = nodes.filter((n) => n.state === "succeeded").length;
  return `run ${run.run_id} ${run.state} · ${done}/${count(nodes.length, "node")} succeeded`;
}

/**
 * Drives `runId` here until it stops, printing progress on stderr; the exit code says how it stopped, and
 * the last line how to continue when it did not converge.
 */
async function drive(
  io: CliIo,
  pipelines: EnginePipelines,
  runId: string,
  signal: AbortSignal,
  quietProgress: boolean,
): Promise<{ result: DriveResult; exitCode: number }> {
  io.stderr.write(`run ${runId} · driving here (Ctrl-C stops; the run stays resumable)\n`);
  const result = await pipelines.drive(runId, {
    signal,
    leaseTtlMs: LEASE_TTL_MS,
    onEvent: (event) => {
      if (quietProgress) return;
      const line = pipelineProgressLine(runId, event);
      if (line !== null) io.stderr.write(`${line}\n`);
    },
  });
  const { run, nodes } = result;
  const resume = `icode pipeline resume ${runId}`;
  switch (result.stop) {
    case "converged":
      io.stderr.write(`${summaryLine(run, nodes)}\n`);
      return { result, exitCode: run.state === "succeeded" ? EXIT.ok : EXIT.failed };
    case "paused": {
      const stuck = nodes.filter((n) => n.state === "failed" || n.state === "blocked").map((n) => n.node_id);
      const how =
        stuck.length === 0
          ? `continue with: ${resume}`
          : `retry or skip ${stuck.map((id) => shellQuote(id)).join(", ")} (icode pipeline retry ${runId} ${shellQuote(stuck[0]!)}), or: icode pipeline cancel ${runId}`;
      io.stderr.write(`${summaryLine(run, nodes)}: paused; ${how}\n`);
      return { result, exitCode: EXIT_PAUSED };
    }
    case "stopped":
      io.stderr.write(`run ${runId} stopped here and left resumable; continue with: ${resume}\n`);
      return { result, exitCode: exitCodeOfSignal(stopSignalOf(signal)) };
    case "waiting_approval": {
      const gates = nodes.filter((n) => n.state === "waiting_approval").map((n) => n.node_id);
      const how =
        gates.length === 0
          ? `continue with: ${resume}`
          : `approve ${gates.map((id) => shellQuote(id)).join(", ")} with: icode pipeline approve ${runId} ${shellQuote(gates[0]!)}`;
      io.stderr.write(`${summaryLine(run, nodes)}: waiting for approval; ${how}\n`);
      return { result, exitCode: EXIT_PAUSED };
    }
    case "lease_lost":
      io.stderr.write(
        `run ${runId}: another process took over driving it; follow it with: icode pipeline inspect ${runId}\n`,
      );
      return { result, exitCode: EXIT.failed };
    case "lease_held":
      io.stderr.write(
        `run ${runId} is driven by another process (${oneLine(result.heldBy?.owner ?? "?")}); follow it with: icode pipeline inspect ${runId}\n`,
      );
      return { result, exitCode: EXIT.ok };
  }
}

function runResultJson(result: DriveResult): PipelineRunResultJson {
  return {
    version: PIPELINE_JSON_VERSION,
    stop: result.stop,
    run: withoutDefinition(result.run),
    nodes: result.nodes,
  };
}

async function runCommand(
  parsed: ParsedCommand,
  io: CliIo,
  pipelines: EnginePipelines,
  signal: AbortSignal,
): Promise<number> {
  const values = parsed.values as ValuesOf<typeof PIPELINE_RUN>;
  const json = values.json === true;
  const id = parsed.args[0]!;
  let taskInput = values.input ?? "";
  if (values["input-file"] !== undefined) {
    const read = await readInputFile(values["input-file"], io.cwd, io.stdin);
    if (!read.ok) {
      io.stderr.write(`icode: ${oneLine(read.message)} [${read.code}]\n  help: ${oneLine(read.hint)}\n`);
      if (values.json)
        io.stdout.write(errorJsonLine({ code: read.code, message: read.message, hint: read.hint }));
      return EXIT.failed;
    }
    taskInput = read.text;
  }
  let run: PipelineRun;
  try {
    run = await pipelines.start({
      definitionId: id,
      taskInput,
      ...(values["failure-policy"] === undefined
        ? {}
        : { failurePolicy: values["failure-policy"] as PipelineRun["failure_policy"] }),
    });
  } catch (error) {
    return fail(io, json, error, id);
  }
  try {
    const { result, exitCode } = await drive(io, pipelines, run.run_id, signal, false);
    if (json) io.stdout.write(`${JSON.stringify(runResultJson(result))}\n`);
    return exitCode;
  } catch (error) {
    const code = fail(io, json, error, run.run_id);
    io.stderr.write(
      `run ${run.run_id} was created and not driven; continue with: icode pipeline resume ${run.run_id}\n`,
    );
    return code;
  }
}

/**
 * `icode pipeline resume` of a run that is not paused but active (`pending`, `running`) and that no live
 * process drives — its driver was killed, or never started: drive it here. A lease that is still live is
 * waited for until it expires (a dead driver no longer renews it); one that is renewed meanwhile belongs to
 * a live driver, and is left to it. `null`: not such a run (the `resume` action applies).
 */
async function takeOver(
  io: CliIo,
  pipelines: EnginePipelines,
  runId: string,
  signal: AbortSignal,
  json: boolean,
): Promise<{ exitCode: number } | null> {
  const first = await pipelines.inspect(runId);
  if (first.run.state !== "pending" && first.run.state !== "running") return null;
  let lease = first.lease;
  if (lease !== null && Date.parse(lease.expires_at) > Date.now()) {
    io.stderr.write(
      `run ${runId} has a driver (${oneLine(lease.owner)}) until ${lease.expires_at}; waiting for it to end or its lease to expire\n`,
    );
    while (lease !== null && Date.parse(lease.expires_at) > Date.now() && !signal.aborted) {
      const expires = lease.expires_at;
      await new Promise((r) =>
        setTimeout(r, Math.min(500, Math.max(20, Date.parse(expires) - Date.now() + 20))),
      );
      lease = (await pipelines.inspect(runId)).lease;
      if (lease !== null && lease.expires_at !== expires && Date.parse(lease.expires_at) > Date.now()) {
        io.stderr.write(
          `run ${runId} is driven by a live process (${oneLine(lease.owner)}); follow it with: icode pipeline inspect ${runId}\n`,
        );
        return { exitCode: EXIT.ok };
      }
    }
    if (signal.aborted) return { exitCode: exitCodeOfSignal(stopSignalOf(signal)) };
  }
  const { result, exitCode } = await drive(io, pipelines, runId, signal, false);
  if (json) {
    const out: PipelineControlJson = {
      version: PIPELINE_JSON_VERSION,
      action: "resume",
      result: { ok: true },
      via: "direct",
      run: withoutDefinition(result.run),
      stop: result.stop,
    };
    io.stdout.write(`${JSON.stringify(out)}\n`);
  }
  return { exitCode };
}

const ACTIONS: Record<string, PipelineCommand["action"]> = {
  approve: "approve_node",
  retry: "retry_node",
  skip: "skip_node",
  pause: "pause",
  resume: "resume",
  cancel: "cancel",
  "stop-sessions": "stop_sessions",
};

async function controlCommand(
  parsed: ParsedCommand,
  io: CliIo,
  pipelines: EnginePipelines,
  signal: AbortSignal,
): Promise<number> {
  const json = parsed.values.json === true;
  const action = ACTIONS[parsed.spec.path[1]!]!;
  const [runId, nodeId] = parsed.args as [string, string | undefined];
  const command: PipelineCommand =
    action === "approve_node" || action === "retry_node"
      ? { action, node_id: nodeId! }
      : action === "skip_node"
        ? { action, node_id: nodeId!, note: (parsed.values as ValuesOf<typeof PIPELINE_SKIP>).note ?? null }
        : { action };
  if (action === "resume") {
    const taken = await takeOver(io, pipelines, runId, signal, json).catch((error: unknown) => ({
      exitCode: fail(io, json, error, runId),
    }));
    if (taken !== null) return taken.exitCode;
  }
  let sent: PipelineControlResult;
  try {
    sent = await pipelines.control(runId, command);
  } catch (error) {
    return fail(io, json, error, runId);
  }
  const out = (stop: PipelineControlJson["stop"], run: PipelineRun): PipelineControlJson => ({
    version: PIPELINE_JSON_VERSION,
    action,
    result: sent.result,
    via: sent.via,
    run: withoutDefinition(run),
    stop,
  });
  if (!sent.result.ok) {
    io.stderr.write(`icode: ${oneLine(sent.result.message)} [${sent.result.code}]\n`);
    io.stderr.write(`  help: see the run's states with: icode pipeline inspect ${runId}\n`);
    if (json) io.stdout.write(`${JSON.stringify(out(null, sent.run))}\n`);
    return EXIT.failed;
  }
  io.stderr.write(
    `${action}${nodeId === undefined ? "" : ` ${oneLine(nodeId)}`} applied to run ${runId} (${sent.via === "driver" ? "by its driver" : "directly"}); the run is ${sent.run.state}\n`,
  );
  if (!sent.needsDriver) {
    if (json) io.stdout.write(`${JSON.stringify(out(null, sent.run))}\n`);
    return EXIT.ok;
  }
  try {
    const { result, exitCode } = await drive(io, pipelines, runId, signal, false);
    if (json) io.stdout.write(`${JSON.stringify(out(result.stop, result.run))}\n`);
    return exitCode;
  } catch (error) {
    return fail(io, json, error, runId);
  }
}

export const command = {
  async run({ command: parsed, io, signal }: CommandContext): Promise<number> {
    const pipelines = pipelinesFor({ cwd: io.cwd, env: io.env });
    try {
      return parsed.spec.path[1] === "run"
        ? await runCommand(parsed, io, pipelines, signal)
        : await controlCommand(parsed, io, pipelines, signal);
    } finally {
      await pipelines.close();
    }
  },
};
