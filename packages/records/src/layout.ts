import { join } from "node:path";

/**
 * Where records live. Every path is built from a `chrysHome` (or a session folder) passed in; nothing here
 * reads the environment or the working directory.
 *
 * ```
 * <chrysHome>/hooks.json
 * <chrysHome>/sessions/<session_id>/session.json
 * <chrysHome>/sessions/<session_id>/workflows/<run_id>/{run,definition,environment,input}.json
 *                                                     /source/…  events.jsonl  outputs.json  output.json
 *                                                     /nodes/<activation>.<attempt>.diagnostics.<hash8>.json
 *                                                     large-strings.utf8  questions.jsonl
 * ```
 */
export const FILES = {
  session: "session.json",
  runs: "workflows",
  header: "run.json",
  definition: "definition.json",
  environment: "environment.json",
  input: "input.json",
  source: "source",
  events: "events.jsonl",
  outputs: "outputs.json",
  output: "output.json",
  nodes: "nodes",
  /** The large strings of the events, each stored once (see `LARGE_STRINGS_FIELD`). */
  strings: "large-strings.utf8",
  /** The full questions of each ask (the events keep a summary; see ./questions). */
  questions: "questions.jsonl",
} as const;

export function sessionsDir(chrysHome: string): string {
  return join(chrysHome, "sessions");
}

export function sessionDir(chrysHome: string, sessionId: string): string {
  return join(sessionsDir(chrysHome), sessionId);
}

export function runDir(sessionDirPath: string, runId: string): string {
  return join(sessionDirPath, FILES.runs, runId);
}

export function hooksFile(chrysHome: string): string {
  return join(chrysHome, "hooks.json");
}
