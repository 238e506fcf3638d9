import { fileURLToPath } from "node:url";
import { type McpDoubleOptionsInput, optionsToArgv } from "./options";

/** The built stdio executable (`pnpm --filter @icode/mcp-server-double build` makes it). */
export const MCP_STDIO_BIN = fileURLToPath(new URL("../dist/stdio.js", import.meta.url));
/** The built executable that serves streamable HTTP in its own process. */
export const MCP_HTTP_BIN = fileURLToPath(new URL("../dist/http.js", import.meta.url));

/** A command to spawn: the running Node binary and its arguments. */
export type McpDoubleCommand = { command: string; args: string[] };

/** How to start a stdio MCP double with `options`, e.g. as an MCP server entry of ACP `session/new`. */
export function mcpStdioCommand(options: McpDoubleOptionsInput = {}): McpDoubleCommand {
  return { command: process.execPath, args: [MCP_STDIO_BIN, ...optionsToArgv(options)] };
}

/** How to start an HTTP MCP double in its own process; it prints its URL as the first stdout line. */
export function mcpHttpCommand(options: McpDoubleOptionsInput = {}, port = 0): McpDoubleCommand {
  return {
    command: process.execPath,
    args: [MCP_HTTP_BIN, "--port", String(port), ...optionsToArgv(options)],
  };
}
