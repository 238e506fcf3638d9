import { readdirSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DefinitionSchema } from "@icode/workflow-graph";
import { atomicTempOwner } from "./atomic";
import { recordsError } from "./codes";
import type { EngineEventOf } from "./engine-events";
import { EventLog, readEventLog } from "./event-log";
import { isRunId } from "./ids";
import { readJsonFile } from "./json-file";
import { FILES } from "./layout";
import { isProcessAlive, processStartMarker, runProcessAlive } from "./process-marker";
import { RunHeaderSchema } from "./run-files";

/**
 * The error class recorded on an orphaned run's end event: the process that ran it is gone. The run's
 * `reason` stays `""` (clarification 11 keeps `reason` for cancellations), so the event is a valid
 * `workflow_run_end` of the scheduler's union.
 */
export const ORPHAN_ERROR_CLASS = "process_lost";

export interface RecoveryOptions {
  /** Whether a pid names a live process; `process.kill(pid, 0)` by default. */
  isAlive?: (pid: number) => boolean;
  /** The start marker of a live pid; `/proc/<pid>/stat` field 22 (plus boot ID) by default, `null` elsewhere. */
  startMarker?: (pid: number) => string | null;
}

export interface RecoveredRun {
  run_id: string;
  pid: number;
  /** The appended end event. */
  event: EngineEventOf<"workflow_run_end">;
}

/**
 * Finds the runs of a session that have no `workflow_run_end` and whose process is gone — its pid is not
 * alive, or is alive but is another process (its start marker differs from the one in `run.json`) — and
 * appends a `workflow_run_end` with `outcome: "orphaned"` to each. Outputs that had completed stay in the
 * event's `outputs`. Runs of live processes, finished runs and unreadable run folders are left alone.
 *
 * It also removes what a process that died left half-made: a run folder it was still building
 * (`.<run_id>.<pid>.partial`, see `createRun`) and temporary files of atomic writes (`.<name>.<pid>.<hex>.tmp`)
 * in the session folder, its run folders and their `nodes/`, and empty run folders. Run folders are the truth: a run that
 * `session.json` does not list is found and recovered like any other.
 */
export function recoverOrphans(
  sessionDirPath: string,
  isAlive: ((pid: number) => boolean) | RecoveryOptions = {},
): RecoveredRun[] {
  const options: RecoveryOptions = typeof isAlive === "function" ? { isAlive } : isAlive;
  const alive = options.isAlive ?? isProcessAlive;
  const marker = options.startMarker ?? processStartMarker;
  const folder = join(sessionDirPath, FILES.runs);
  let names: string[];
  try {
    names = readdirSync(folder).filter(isRunId).sort();
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw recordsError("record_invalid", `Could not list the runs in ${folder}: ${String(cause)}.`, {
      cause,
    });
  }
  const dead = (pid: number) => pid !== process.pid && !alive(pid);
  removeLeftovers(sessionDirPath, dead);
  for (const name of readdirSync(folder)) {
    const partial = /^\.([0-9a-f]{32})\.(\d+)\.partial$/.exec(name);
    if (partial !== null && dead(Number(partial[2])))
      rmSync(join(folder, name), { recursive: true, force: true });
  }
  const recovered: RecoveredRun[] = [];
  for (const runId of names) {
    removeLeftovers(join(folder, runId), dead);
    removeLeftovers(join(folder, runId, FILES.nodes), dead);
    const dir = join(folder, runId);
    let header: ReturnType<typeof RunHeaderSchema.parse>;
    try {
      header = readJsonFile(join(dir, FILES.header), RunHeaderSchema, "the run header");
    } catch {
      // An empty run folder (made by a process that died before writing anything into it, as older versions
      // did) holds nothing to recover: it goes. `rmdir` removes only a folder that is still empty.
      try {
        rmdirSync(dir);
      } catch {
        // Not empty, or not removable: an unreadable run, left alone.
      }
      continue;
    }
    const eventsPath = join(dir, FILES.events);
    const log = readEventLog(eventsPath);
    if (log.events.some((e) => e.type === "workflow_run_end")) continue;
    if (runProcessAlive(header, { isAlive: alive, startMarker: marker })) continue;
    const last = log.events[log.events.length - 1];
    const event: EngineEventOf<"workflow_run_end"> = {
      type: "workflow_run_end",
      run_id: runId,
      seq: log.events.reduce((max, e) => Math.max(max, e.seq + 1), 0),
      ts: last?.ts ?? Date.parse(header.started_at),
      outcome: "orphaned",
      reason: "",
      node_id: "",
      error:
        `The process that ran this run (pid ${header.pid}) ended without finalizing it; ` +
        `recovered at ${new Date().toISOString()}.`,
      activation_id: null,
      error_class: ORPHAN_ERROR_CLASS,
      outputs: completedOutputs(dir, log.events),
    };
    const writer = EventLog.open(eventsPath);
    try {
      writer.append(event);
    } finally {
      writer.close();
    }
    recovered.push({ run_id: runId, pid: header.pid, event });
  }
  return recovered;
}

/** The output nodes that completed before the process died, in `output()` order (clarification 11). */
function completedOutputs(
  dir: string,
  events: ReturnType<typeof readEventLog>["events"],
): EngineEventOf<"workflow_run_end">["outputs"] {
  let outputs: string[];
  try {
    outputs = readJsonFile(join(dir, FILES.definition), DefinitionSchema, "the graph definition").outputs;
  } catch {
    return [];
  }
  const latest = new Map<string, EngineEventOf<"node_completed">>();
  for (const event of events) {
    if (event.type === "node_completed" && event.loop_id === null) latest.set(event.node_id, event);
  }
  const result: EngineEventOf<"workflow_run_end">["outputs"] = [];
  for (const nodeId of outputs) {
    const done = latest.get(nodeId);
    if (done !== undefined) {
      result.push({
        node_id: nodeId,
        activation_id: done.activation_id,
        text: done.value.text,
        data: done.value.data,
      });
    }
  }
  return result;
}

/** Removes the temporary files of atomic writes in `dir` whose writing process is dead. */
function removeLeftovers(dir: string, dead: (pid: number) => boolean): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = atomicTempOwner(name);
    if (owner !== null && dead(owner)) rmSync(join(dir, name), { force: true });
  }
}
