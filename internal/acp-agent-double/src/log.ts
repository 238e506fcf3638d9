import { appendFileSync } from "node:fs";

// The writer of the agent log. It loads no schema (the agent starts fast); `log-entry.ts` holds the shape.

/** Lines stay below this size: one `appendFileSync` of a short line never interleaves with other processes'. */
export const MAX_LOG_LINE_BYTES = 4000;

type Fields = { event: string } & Record<string, unknown>;

function shorten(value: unknown, max: number): unknown {
  if (typeof value === "string")
    return value.length > max ? `${value.slice(0, max)}…(${value.length})` : value;
  if (Array.isArray(value)) return value.slice(0, 16).map((v) => shorten(v, max));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v, max)]));
  }
  return value;
}

/** One log line for `fields`, shortened until it is below `MAX_LOG_LINE_BYTES`. */
export function logLine(fields: Fields): string {
  let line = JSON.stringify(fields);
  for (const max of [1000, 200, 40]) {
    if (Buffer.byteLength(line) < MAX_LOG_LINE_BYTES) return line;
    line = JSON.stringify(shorten(fields, max));
  }
  if (Buffer.byteLength(line) < MAX_LOG_LINE_BYTES) return line;
  const { event, pid, ts, seq, method, sessionId } = fields;
  return JSON.stringify({ event, pid, ts, seq, method, sessionId });
}

export type AgentLog = (fields: Fields) => void;

/** A logger appending to `file` (with pid, ts and seq added), or one that does nothing without a file. */
export function createAgentLog(file: string | undefined, pid: number): AgentLog {
  if (file === undefined || file === "") return () => {};
  let seq = 0;
  return (fields) => {
    appendFileSync(file, `${logLine({ ...fields, pid, ts: Date.now(), seq: seq++ })}\n`);
  };
}
