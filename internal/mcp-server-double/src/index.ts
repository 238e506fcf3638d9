/**
 * @module @icode/mcp-server-double
 * MCP servers with test tools (`echo`, `add`, `slow`, `big`, `fail`, `count`), a `greet` prompt and server
 * instructions, served over stdio (`dist/stdio.js`) or streamable HTTP (in process, or `dist/http.js`),
 * with an optional call log that counts calls across processes.
 *
 * @example
 * import { mcpStdioCommand, readMcpCallLog, startMcpHttpServer } from "@icode/mcp-server-double";
 * const http = await startMcpHttpServer({ tools: ["echo", "count"], log: "/tmp/calls.jsonl" });
 * // http.url → "http://127.0.0.1:40123/mcp"
 * const stdio = mcpStdioCommand({ prefix: "x_" }); // { command: process.execPath, args: [".../stdio.js", …] }
 * readMcpCallLog("/tmp/calls.jsonl").length; // → number of tool calls answered, by any process
 */
export { appendCallLog, type McpCallLogEntry, McpCallLogEntrySchema, readMcpCallLog } from "./call-log";
export { MCP_DOUBLE_CODES, type McpDoubleCode, McpDoubleCodeSchema } from "./codes";
export {
  MCP_HTTP_BIN,
  MCP_STDIO_BIN,
  type McpDoubleCommand,
  mcpHttpCommand,
  mcpStdioCommand,
} from "./command";
export { MCP_HTTP_PATH, type McpHttpServerHandle, startMcpHttpServer } from "./http-server";
export {
  DEFAULT_INSTRUCTIONS,
  type McpDoubleOptions,
  type McpDoubleOptionsInput,
  McpDoubleOptionsSchema,
  optionsFromArgv,
  optionsToArgv,
  parseMcpDoubleOptions,
  TOOL_NAMES,
  type ToolName,
  ToolNameSchema,
} from "./options";
export {
  BIG_MAX_CHARS,
  bigText,
  type CallCounter,
  createCallCounter,
  createMcpDoubleServer,
  PROMPT_NAME,
  SLOW_MAX_MS,
} from "./server";
