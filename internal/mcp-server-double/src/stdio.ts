/**
 * The stdio MCP double: `node dist/stdio.js [--tools echo,add] [--prefix p_] [--no-prompts] …` (see
 * `optionsFromArgv`). It serves one client on stdin/stdout and exits when stdin closes.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { optionsFromArgv } from "./options";
import { createCallCounter, createMcpDoubleServer } from "./server";

try {
  const { options } = optionsFromArgv(process.argv.slice(2), process.env);
  const counter = createCallCounter();
  serveStdio(() => createMcpDoubleServer(options, counter, "stdio"), {
    onerror: (error) => process.stderr.write(`mcp-double: ${error.message}\n`),
  });
} catch (error) {
  process.stderr.write(`mcp-double: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
