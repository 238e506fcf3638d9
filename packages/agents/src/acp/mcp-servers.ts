import type { McpServer } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { AcpFailure } from "./failure";
import type { InitializeAnswer } from "./wire";

const Name = z.string().min(1);
const Pairs = z.record(z.string(), z.string()).default({});

/**
 * An MCP server the engine hands to an ACP agent's session (`session/new`'s `mcpServers`), such as the
 * pipelines' handoff server. A profile's own `tools` never apply to ACP agents; these are the engine's.
 */
export const AcpMcpServerSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("stdio"),
    name: Name,
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: Pairs,
  }),
  z.object({ type: z.literal("http"), name: Name, url: z.url(), headers: Pairs }),
  z.object({ type: z.literal("sse"), name: Name, url: z.url(), headers: Pairs }),
]);
export type AcpMcpServer = z.input<typeof AcpMcpServerSchema>;

const pairs = (record: Record<string, string>) =>
  Object.entries(record).map(([name, value]) => ({ name, value }));

/**
 * The servers in ACP's wire form, after checking that the agent can take them: an `http` or `sse` server
 * needs the matching `mcpCapabilities`, else the configuration is rejected (`acp_config_rejected`), since
 * the engine passes only servers the node needs.
 */
export function acpMcpServers(servers: readonly AcpMcpServer[], init: InitializeAnswer): McpServer[] {
  const parsed = z.array(AcpMcpServerSchema).safeParse(servers);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AcpFailure(
      "acp_start_failed",
      `the engine passed an invalid MCP server for the ACP session at ${issue?.path.join(".")}: ${issue?.message}`,
    );
  }
  const caps = init.agentCapabilities?.mcpCapabilities;
  return parsed.data.map((server): McpServer => {
    if (server.type === "stdio") {
      return { name: server.name, command: server.command, args: server.args, env: pairs(server.env) };
    }
    if (caps?.[server.type] !== true) {
      throw new AcpFailure(
        "acp_config_rejected",
        `the agent does not accept ${server.type} MCP servers (mcpCapabilities.${server.type} is not true), and this node needs "${server.name}"`,
        { hint: "use an agent that supports it, or a stdio server" },
      );
    }
    return { type: server.type, name: server.name, url: server.url, headers: pairs(server.headers) };
  });
}
