/**
 * The HTTP MCP double in its own process: `node dist/http.js [--port N] [options of stdio.js]`. Once it
 * listens it prints one JSON line `{"url": "http://127.0.0.1:PORT/mcp", "pid": N}` on stdout. It stops on
 * SIGTERM or SIGINT, and when its stdin is a pipe that closes (its parent died).
 */
import { fstatSync } from "node:fs";
import { startMcpHttpServer } from "./http-server";
import { optionsFromArgv } from "./options";

async function main(): Promise<void> {
  const { options, port } = optionsFromArgv(process.argv.slice(2), process.env);
  const server = await startMcpHttpServer(options, { port });
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  if (fstatSync(0).isFIFO()) {
    process.stdin.on("end", stop);
    process.stdin.resume();
  }
  process.stdout.write(`${JSON.stringify({ url: server.url, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`mcp-double: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
