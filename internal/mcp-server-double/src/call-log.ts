import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";
import type { McpDoubleCode } from "./codes";

/** One line of the call log: a tool call answered by a double, in whichever process served it. */
export const McpCallLogEntrySchema = z.object({
  event: z.literal("call"),
  pid: z.number().int(),
  ts: z.number(),
  server: z.string(),
  transport: z.enum(["stdio", "http"]),
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  isError: z.boolean(),
});
export type McpCallLogEntry = z.infer<typeof McpCallLogEntrySchema>;

/** Lines stay below this size, so appends from several processes never interleave. */
const MAX_LINE_BYTES = 4000;

function shorten(value: unknown, max: number): unknown {
  if (typeof value === "string")
    return value.length > max ? `${value.slice(0, max)}…(${value.length})` : value;
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => shorten(v, max));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v, max)]));
  }
  return value;
}

/** Appends one entry as one `appendFileSync` of one line (< 4 KiB), safe across processes. */
export function appendCallLog(file: string, entry: McpCallLogEntry): void {
  let line = JSON.stringify(entry);
  for (const max of [200, 20]) {
    if (Buffer.byteLength(line) < MAX_LINE_BYTES) break;
    line = JSON.stringify({ ...entry, arguments: shorten(entry.arguments, max) });
  }
  if (Buffer.byteLength(line) >= MAX_LINE_BYTES) line = JSON.stringify({ ...entry, arguments: {} });
  appendFileSync(file, `${line}\n`);
}

/** Every entry of a call log, oldest first; a missing file is an empty log. */
export function readMcpCallLog(file: string): McpCallLogEntry[] {
  if (!existsSync(file)) return [];
  const entries: McpCallLogEntry[] = [];
  const lines = readFileSync(file, "utf8").split("\n");
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new WorkflowError<McpDoubleCode>("log_invalid", `${file}:${index + 1} is not JSON: ${line}`, {
        hint: "the call log holds only lines written by the MCP double; give each double its own file",
        cause,
      });
    }
    const result = McpCallLogEntrySchema.safeParse(json);
    if (!result.success) {
      throw new WorkflowError<McpDoubleCode>(
        "log_invalid",
        `${file}:${index + 1} is not a call log entry:\n${z.prettifyError(result.error)}`,
        { hint: "the call log holds only lines written by the MCP double; give each double its own file" },
      );
    }
    entries.push(result.data);
  });
  return entries;
}
