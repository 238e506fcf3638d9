import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

/**
 * A streamable-HTTP MCP server offering `submit_handoff` and `report_blocked`, as the engine will: a
 * handoff without a `status` is refused with a tool error the agent can read and correct.
 */
export async function startHandoffServer(): Promise<{
  url: string;
  handoffs: Record<string, unknown>[];
  blocked: string[];
  close(): Promise<void>;
}> {
  const handoffs: Record<string, unknown>[] = [];
  const blocked: string[] = [];
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "handoff", version: "0.0.0" });
    server.registerTool(
      "submit_handoff",
      { description: "Hand the node's result on.", inputSchema: z.looseObject({}) },
      async (args) => {
        if (typeof args["status"] !== "string") {
          return { content: [{ type: "text", text: "invalid handoff: status is required" }], isError: true };
        }
        handoffs.push(args);
        return { content: [{ type: "text", text: "handoff accepted" }] };
      },
    );
    server.registerTool(
      "report_blocked",
      { description: "Say why the node cannot go on.", inputSchema: z.object({ reason: z.string() }) },
      async ({ reason }) => {
        blocked.push(reason);
        return { content: [{ type: "text", text: "blocked noted" }] };
      },
    );
    return server;
  });
  const nodeHandler = toNodeHandler(handler);
  const http = createServer((req, res) => void nodeHandler(req, res));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    handoffs,
    blocked,
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
