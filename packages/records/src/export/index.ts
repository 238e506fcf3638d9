import { buildPerfettoTrace, type PerfettoTrace } from "./perfetto";
import { buildTrajectory, type Trajectory } from "./trajectory";

export const EXPORT_FORMATS = ["json", "perfetto"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * A session's analysis export (`icode trajectory export`): `json` is the trajectory (runs, activations,
 * attempts, timings, usage); `perfetto` is Chrome trace-event JSON for ui.perfetto.dev. Both are derived from
 * the runs' `events.jsonl`; write them with `JSON.stringify`.
 */
export function exportTrajectory(sessionDirPath: string, format: "json"): Trajectory;
export function exportTrajectory(sessionDirPath: string, format: "perfetto"): PerfettoTrace;
export function exportTrajectory(sessionDirPath: string, format: ExportFormat): Trajectory | PerfettoTrace;
export function exportTrajectory(sessionDirPath: string, format: ExportFormat): Trajectory | PerfettoTrace {
  return format === "json" ? buildTrajectory(sessionDirPath) : buildPerfettoTrace(sessionDirPath);
}
