import type { McpServer } from "@agentclientprotocol/sdk/unstable";
import type { Client } from "@modelcontextprotocol/client";

// MCP client connections of one session, to the servers its `session/new` named. The MCP client SDK is
// imported on the first call only, so a turn without MCP steps never loads it.

/** What an MCP tool call answered, reduced to what the double echoes. */
export type McpCallResult = { server: string; isError: boolean; text: string; raw: unknown };

type Connection = { client: Client; tools: Set<string> };

function serverKind(server: McpServer): string {
  return "type" in server ? server.type : "stdio";
}

function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as { type?: string; text?: string }[]) : [];
  const texts = blocks.filter((b) => b.type === "text" && typeof b.text === "string").map((b) => b.text);
  if (texts.length > 0) return texts.join("\n");
  return JSON.stringify(result.structuredContent ?? result.content ?? null);
}

export class McpPool {
  private readonly connections = new Map<string, Promise<Connection>>();

  constructor(
    private readonly servers: readonly McpServer[],
    private readonly cwd: string,
  ) {}

  private async open(server: McpServer): Promise<Connection> {
    const { Client, StreamableHTTPClientTransport, SSEClientTransport } = await import(
      "@modelcontextprotocol/client"
    );
    const client = new Client({ name: "acp-agent-double", version: "0.1.0" });
    if ("type" in server && server.type === "acp") {
      throw new Error(`MCP server ${server.name} is of type acp, which the agent double does not speak`);
    }
    if ("type" in server) {
      const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
      const url = new URL(server.url);
      const transport =
        server.type === "http"
          ? new StreamableHTTPClientTransport(url, { requestInit: { headers } })
          : new SSEClientTransport(url, { requestInit: { headers } });
      await client.connect(transport);
    } else {
      const { StdioClientTransport, getDefaultEnvironment } = await import(
        "@modelcontextprotocol/client/stdio"
      );
      // As MCP hosts do: a small safe environment plus what the client gave for this server.
      const env = {
        ...getDefaultEnvironment(),
        ...Object.fromEntries(server.env.map((e) => [e.name, e.value])),
      };
      await client.connect(
        new StdioClientTransport({
          command: server.command,
          args: server.args,
          env,
          cwd: this.cwd,
          stderr: "inherit",
        }),
      );
    }
    const { tools } = await client.listTools();
    return { client, tools: new Set(tools.map((t) => t.name)) };
  }

  private connection(server: McpServer): Promise<Connection> {
    let connection = this.connections.get(server.name);
    if (!connection) {
      connection = this.open(server);
      connection.catch(() => {}); // awaited by the caller; close() must not see an unhandled rejection
      this.connections.set(server.name, connection);
    }
    return connection;
  }

  /** The server named `name`, or else the first server of `session/new` that offers `tool`. */
  private async find(
    tool: string,
    name: string | undefined,
  ): Promise<{ server: McpServer; connection: Connection }> {
    if (name !== undefined) {
      const server = this.servers.find((s) => s.name === name);
      if (!server) {
        const names = this.servers.map((s) => s.name).join(", ") || "none";
        throw new Error(`no MCP server named ${name} in session/new (servers: ${names})`);
      }
      const connection = await this.connection(server);
      if (!connection.tools.has(tool)) {
        throw new Error(
          `MCP server ${name} offers no tool ${tool} (tools: ${[...connection.tools].join(", ")})`,
        );
      }
      return { server, connection };
    }
    const failures: string[] = [];
    for (const server of this.servers) {
      try {
        const connection = await this.connection(server);
        if (connection.tools.has(tool)) return { server, connection };
      } catch (error) {
        failures.push(
          `${server.name} (${serverKind(server)}): ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    const tried = this.servers.map((s) => s.name).join(", ") || "none were given";
    throw new Error(
      `no MCP server of session/new offers ${tool} (servers: ${tried})${failures.length ? `; failed: ${failures.join("; ")}` : ""}`,
    );
  }

  /** Calls `tool` on a server; a tool error is a result (`isError`), a missing server or tool throws. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    name: string | undefined,
    signal: AbortSignal,
  ): Promise<McpCallResult> {
    const { server, connection } = await this.find(tool, name);
    const result = await connection.client.callTool({ name: tool, arguments: args }, { signal });
    return { server: server.name, isError: result.isError === true, text: resultText(result), raw: result };
  }

  /** Closes every connection (stdio servers are stopped). */
  async close(): Promise<void> {
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      connections.map(async (pending) => {
        try {
          await (await pending).client.close();
        } catch {
          // a connection that never opened, or a server already gone: nothing left to close
        }
      }),
    );
  }
}
