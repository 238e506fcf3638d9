import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  localhostHostValidation,
  localhostOriginValidation,
  toNodeHandler,
} from "@modelcontextprotocol/node";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { type McpDoubleOptionsInput, parseMcpDoubleOptions } from "./options";
import { createCallCounter, createMcpDoubleServer } from "./server";

/** The path the streamable-HTTP endpoint is served on. */
export const MCP_HTTP_PATH = "/mcp";

/** A running HTTP double: its endpoint URL, the port it got, and `close()`. */
export type McpHttpServerHandle = {
  url: string;
  port: number;
  close(): Promise<void>;
};

/**
 * Starts a streamable-HTTP MCP double in this process on 127.0.0.1 (`port` 0 picks a free port), with the
 * SDK's localhost Host/Origin guards in front. Stateless: each request is served by a fresh server from
 * one factory, and all of them share one call counter.
 */
export async function startMcpHttpServer(
  input: McpDoubleOptionsInput = {},
  { port = 0 }: { port?: number } = {},
): Promise<McpHttpServerHandle> {
  const options = parseMcpDoubleOptions(input);
  const counter = createCallCounter();
  const handler = createMcpHandler(() => createMcpDoubleServer(options, counter, "http"));
  const nodeHandler = toNodeHandler(handler);
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  const server = createServer((req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    if (new URL(req.url ?? "/", "http://127.0.0.1").pathname !== MCP_HTTP_PATH) {
      res
        .writeHead(404, { "content-type": "text/plain" })
        .end(`no MCP endpoint here; use ${MCP_HTTP_PATH}\n`);
      return;
    }
    void nodeHandler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${bound}${MCP_HTTP_PATH}`,
    port: bound,
    close() {
      closing ??= (async () => {
        await handler.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
