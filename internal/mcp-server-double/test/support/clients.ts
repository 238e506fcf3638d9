import { existsSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { MCP_HTTP_BIN, MCP_STDIO_BIN, type McpDoubleOptionsInput, mcpStdioCommand } from "../../src/index";

export function requireBuilt(): void {
  for (const bin of [MCP_STDIO_BIN, MCP_HTTP_BIN]) {
    if (!existsSync(bin)) {
      throw new Error(
        `${bin} is missing; build first: npx -y pnpm@10.34.9 exec turbo run build --filter=@icode/mcp-server-double...`,
      );
    }
  }
}

/**
 * A real MCP client connected over stdio to a spawned double: configured by flags from `options`, or, with
 * `options: null`, by `env` alone (the bare executable).
 */
export async function stdioClient(
  options: McpDoubleOptionsInput | null = {},
  env: Record<string, string> = {},
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const command =
    options === null ? { command: process.execPath, args: [MCP_STDIO_BIN] } : mcpStdioCommand(options);
  const transport = new StdioClientTransport({ ...command, env, stderr: "pipe" });
  const client = new Client({ name: "icode-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** A real MCP client connected over streamable HTTP. */
export async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: "icode-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** The text of a tool result's text blocks. */
export function resultText(result: { content?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as { type: string; text?: string }[]) : [];
  return blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}
