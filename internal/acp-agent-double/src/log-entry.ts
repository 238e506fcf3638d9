import { existsSync, readFileSync } from "node:fs";
import { WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";
import type { AcpDoubleCode } from "./codes";

const Base = { pid: z.number().int(), ts: z.number(), seq: z.number().int().min(0) };
const McpServerSummarySchema = z.object({
  name: z.string(),
  type: z.string(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  url: z.string().optional(),
});

/**
 * One line of the agent log (`ACP_DOUBLE_LOG`). Each line carries the agent's `pid`, a time stamp and its
 * `seq` number within that process, so lines of several processes sharing one file can be told apart.
 */
export const AgentLogEntrySchema = z.discriminatedUnion("event", [
  z.object({
    event: z.literal("start"),
    ...Base,
    script: z.string().nullable(),
    source: z.enum(["flag", "env_file", "env_inline"]),
  }),
  /** A request received; the fields present depend on the method. */
  z.object({
    event: z.literal("request"),
    ...Base,
    method: z.string(),
    sessionId: z.string().optional(),
    protocolVersion: z.number().optional(),
    clientFs: z.object({ readTextFile: z.boolean(), writeTextFile: z.boolean() }).optional(),
    methodId: z.string().optional(),
    cwd: z.string().optional(),
    mcpServers: z.array(McpServerSummarySchema).optional(),
    configId: z.string().optional(),
    value: z.union([z.string(), z.boolean()]).optional(),
    modeId: z.string().optional(),
    modelId: z.string().optional(),
    prompt: z.string().optional(),
    promptChars: z.number().int().optional(),
    turn: z.number().int().optional(),
  }),
  /** A notification received (`session/cancel`, or any other). */
  z.object({
    event: z.literal("notification_received"),
    ...Base,
    method: z.string(),
    sessionId: z.string().optional(),
  }),
  /** A `session/update` sent: the update kind, and its text or title when it has one (shortened). */
  z.object({
    event: z.literal("notification"),
    ...Base,
    method: z.literal("session/update"),
    sessionId: z.string(),
    update: z.string(),
    text: z.string().optional(),
  }),
  /** A request the agent sent to the client, with its outcome. */
  z.object({
    event: z.literal("client_request"),
    ...Base,
    method: z.string(),
    sessionId: z.string(),
    path: z.string().optional(),
    outcome: z.string(),
    error: z.string().optional(),
  }),
  /** An MCP tool call made by the agent. */
  z.object({
    event: z.literal("mcp_call"),
    ...Base,
    sessionId: z.string(),
    server: z.string().nullable(),
    tool: z.string(),
    isError: z.boolean(),
    error: z.string().optional(),
  }),
  /** A request answered with a JSON-RPC error. */
  z.object({
    event: z.literal("error"),
    ...Base,
    method: z.string(),
    code: z.number().int(),
    message: z.string(),
  }),
  /** A prompt turn finished. */
  z.object({
    event: z.literal("stop"),
    ...Base,
    sessionId: z.string(),
    turn: z.number().int(),
    stopReason: z.string(),
    modelId: z.string().nullable(),
    modeId: z.string().nullable(),
  }),
  /** The process is about to end: `code` or `signal`, and why. */
  z.object({
    event: z.literal("exit"),
    ...Base,
    code: z.number().int().nullable(),
    signal: z.string().nullable(),
    reason: z.enum(["stdin_closed", "crash", "signal", "fatal"]),
  }),
]);
export type AgentLogEntry = z.infer<typeof AgentLogEntrySchema>;
export type AgentLogEvent = AgentLogEntry["event"];

/** Every entry of an agent log, oldest first; a missing file is an empty log. */
export function readAgentLog(file: string): AgentLogEntry[] {
  if (!existsSync(file)) return [];
  const entries: AgentLogEntry[] = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, index) => {
      if (line.trim() === "") return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (cause) {
        throw new WorkflowError<AcpDoubleCode>(
          "log_invalid",
          `${file}:${index + 1} is not JSON: ${line.slice(0, 200)}`,
          {
            hint: "ACP_DOUBLE_LOG must name a file only agent doubles write to",
            cause,
          },
        );
      }
      const result = AgentLogEntrySchema.safeParse(json);
      if (!result.success) {
        throw new WorkflowError<AcpDoubleCode>(
          "log_invalid",
          `${file}:${index + 1} is not an agent log entry:\n${z.prettifyError(result.error)}`,
          { hint: "ACP_DOUBLE_LOG must name a file only agent doubles write to" },
        );
      }
      entries.push(result.data);
    });
  return entries;
}

/** The finished turns of a log, by any process: its `stop` entries. */
export function finishedTurns(
  entries: readonly AgentLogEntry[],
): Extract<AgentLogEntry, { event: "stop" }>[] {
  return entries.filter((e): e is Extract<AgentLogEntry, { event: "stop" }> => e.event === "stop");
}

/** The prompts received, by any process: `session/prompt` request entries. */
export function receivedPrompts(
  entries: readonly AgentLogEntry[],
): Extract<AgentLogEntry, { event: "request" }>[] {
  return entries.filter(
    (e): e is Extract<AgentLogEntry, { event: "request" }> =>
      e.event === "request" && e.method === "session/prompt",
  );
}
