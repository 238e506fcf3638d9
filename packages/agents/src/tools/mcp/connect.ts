import type { McpServer } from "@icode/agent-profiles";
import { resolveTemplates } from "@icode/agent-profiles/policy";
import { Client, type Prompt, StreamableHTTPClientTransport, type Tool } from "@modelcontextprotocol/client";
import { DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/client/stdio";
import { mcpHttpFetch } from "./http-fetch";
import { ExecaStdioTransport } from "./stdio-transport";

/** How the engine introduces itself to MCP servers. */
const MCP_CLIENT_INFO = { name: "icode", version: "0.1.0" } as const;

type StdioServer = Extract<McpServer, { transport: "stdio" }>;
type HttpServer = Extract<McpServer, { transport: "http" }>;
type Env = Readonly<Record<string, string | undefined>>;

/** One connected MCP server: what it offers, and how to let it go. */
export interface McpConnection {
  readonly server: McpServer;
  readonly client: Client;
  readonly tools: readonly Tool[];
  /** Its prompts, when `load_prompts` is on and it has any. */
  readonly prompts: readonly Prompt[];
  /** Its instructions, as it sent them in `initialize`. */
  readonly instructions: string | undefined;
  /** The server process (stdio), or null. */
  readonly pid: number | null;
  /** The per-request limit in milliseconds (`timeout`). */
  readonly timeoutMs: number;
  close(): Promise<void>;
}

export type McpConnectResult = { ok: true; connection: McpConnection } | { ok: false; message: string };

/**
 * The environment of a stdio server: the variables the MCP SDK lets a server inherit (`HOME`, `LOGNAME`,
 * `PATH`, `SHELL`, `TERM`, `USER`; on Windows `APPDATA`, `PATH`, `SYSTEMROOT`, …) taken from the engine's
 * environment, plus the profile's `env` with its `{{NAME}}` templates resolved.
 */
export function stdioEnvironment(extra: Readonly<Record<string, string>>, env: Env): Record<string, string> {
  const base: Record<string, string> = {};
  for (const name of DEFAULT_INHERITED_ENV_VARS) {
    const value = env[name];
    if (value !== undefined && !value.startsWith("()")) base[name] = value;
  }
  return { ...base, ...extra };
}

/** A Node encoding for the `encoding` field (`utf-8` → `utf8`), or null when Node cannot read or write it. */
export function nodeEncoding(encoding: string | null): BufferEncoding | null {
  if (encoding === null || encoding.trim() === "") return "utf8";
  const name = encoding.trim().toLowerCase();
  const normalized = name === "utf-8" ? "utf8" : name === "utf-16le" ? "utf16le" : name;
  return Buffer.isEncoding(normalized) ? (normalized as BufferEncoding) : null;
}

function missingVariable(field: string, values: Readonly<Record<string, string>>, name: string): string {
  const key = Object.keys(values).find((k) => (values[k] as string).includes(`{{${name}}}`));
  return (
    `${field}${key === undefined ? "" : `.${key}`} needs the environment variable ${name}, which is unset or ` +
    `empty; set it for the engine, or remove it from the profile`
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Connects to one MCP server of a profile and reads what it offers: the stdio server started through
 * execa in `cwd` with `stdioEnvironment`, or the streamable-HTTP endpoint with its headers (templates
 * resolved when `resolve_header_templates`), certificate and proxy settings. `initialize`, `tools/list`
 * and `prompts/list` each get the server's `timeout`. Any failure closes what was opened and is returned
 * as a message naming the server, never thrown.
 */
export async function connectMcpServer(
  server: McpServer,
  options: { cwd: string; env: Env; signal: AbortSignal },
): Promise<McpConnectResult> {
  const timeoutMs = server.timeout * 1000;
  const fail = (message: string): McpConnectResult => ({
    ok: false,
    message: `MCP server "${server.name}" (${server.transport}) is not available: ${message}`,
  });
  const opened = server.transport === "stdio" ? openStdio(server, options) : openHttp(server, options.env);
  if (!opened.ok) return fail(opened.message);
  const { transport, release } = opened;
  const client = new Client(MCP_CLIENT_INFO);
  const closeAll = async () => {
    if (server.transport === "http" && server.terminate_on_close) {
      await (transport as StreamableHTTPClientTransport).terminateSession().catch(() => {});
    }
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
    await release();
  };
  try {
    await client.connect(transport, { timeout: timeoutMs, signal: options.signal });
    const capabilities = client.getServerCapabilities() ?? {};
    const tools =
      capabilities.tools === undefined
        ? []
        : (await client.listTools(undefined, { timeout: timeoutMs })).tools;
    const prompts =
      server.load_prompts && capabilities.prompts !== undefined
        ? (await client.listPrompts(undefined, { timeout: timeoutMs })).prompts
        : [];
    return {
      ok: true,
      connection: {
        server,
        client,
        tools,
        prompts,
        instructions: server.expose_instructions ? client.getInstructions() : undefined,
        pid: transport instanceof ExecaStdioTransport ? transport.pid : null,
        timeoutMs,
        close: closeAll,
      },
    };
  } catch (error) {
    const stderr = transport instanceof ExecaStdioTransport ? transport.stderrTail : "";
    await closeAll();
    const timedOut = (error as { code?: unknown }).code === "REQUEST_TIMEOUT";
    const why = timedOut ? `it did not answer within ${server.timeout} s (timeout)` : describe(error);
    return fail(stderr === "" ? why : `${why}; its stderr ends with: ${stderr.slice(-500)}`);
  }
}

type Opened =
  | { ok: true; transport: ExecaStdioTransport | StreamableHTTPClientTransport; release(): Promise<void> }
  | { ok: false; message: string };

function openStdio(server: StdioServer, options: { cwd: string; env: Env }): Opened {
  const extra = resolveTemplates(server.env, options.env);
  if (!extra.ok) return { ok: false, message: missingVariable("env", server.env, extra.missing) };
  const encoding = nodeEncoding(server.encoding);
  if (encoding === null) {
    return {
      ok: false,
      message: `encoding ${JSON.stringify(server.encoding)} is not one Node can read and write (use utf-8, utf-16le, latin1 or ascii)`,
    };
  }
  const transport = new ExecaStdioTransport({
    command: server.command,
    args: server.args,
    cwd: options.cwd,
    env: stdioEnvironment(extra.value, options.env),
    encoding,
  });
  return { ok: true, transport, release: async () => {} };
}

function openHttp(server: HttpServer, env: Env): Opened {
  let headers: Readonly<Record<string, string>> = server.headers;
  if (server.resolve_header_templates) {
    const resolved = resolveTemplates(server.headers, env);
    if (!resolved.ok)
      return { ok: false, message: missingVariable("headers", server.headers, resolved.missing) };
    headers = resolved.value;
  }
  const url = new URL(server.url);
  const http = mcpHttpFetch(url, { verifySsl: server.verify_ssl, bypassProxy: server.bypass_proxy, env });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { ...headers } },
    fetch: http.fetch,
  });
  return { ok: true, transport, release: http.close };
}
