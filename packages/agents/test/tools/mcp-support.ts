import { existsSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, request, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import {
  MCP_STDIO_BIN,
  type McpDoubleOptionsInput,
  mcpStdioCommand,
  startMcpHttpServer,
} from "@icode/mcp-server-double";
import { execa } from "execa";

export function requireDoubleBuilt(): void {
  if (!existsSync(MCP_STDIO_BIN)) {
    throw new Error(
      `${MCP_STDIO_BIN} is missing; build the doubles first: npx -y pnpm@10.34.9 exec turbo run build --filter=./internal/*`,
    );
  }
}

type Closable = { close(): Promise<void> };
const open: Closable[] = [];

/** Closes every server the helpers below started (call in `afterEach`). */
export async function closeTestServers(): Promise<void> {
  await Promise.all(open.splice(0).map((c) => c.close()));
}

export type Transport = "stdio" | "http";

/**
 * An MCP server entry of a profile for the double: over stdio (the built `dist/stdio.js` run by this Node),
 * or over streamable HTTP (a double started in this process).
 */
export async function doubleServer(
  transport: Transport,
  name: string,
  double: McpDoubleOptionsInput = {},
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  if (transport === "stdio") {
    const { command, args } = mcpStdioCommand({ name, ...double });
    return { name, transport, command, args, ...extra };
  }
  const server = await startMcpHttpServer({ name, ...double });
  open.push(server);
  return { name, transport, url: server.url, ...extra };
}

/** A project profile with these MCP servers (JSON is YAML). */
export function mcpProfile(servers: readonly Record<string, unknown>[], name = "Mcp"): string {
  return `name: ${name}\ntools:\n  mcp: ${JSON.stringify(servers)}\n`;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
}

function closer(server: Server, sockets: Set<Socket>): Closable {
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface ForwardedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A loopback reverse proxy in front of an HTTP MCP endpoint, plain or TLS (`tls`), recording every request.
 * With `sessionId` it plays a server with sessions in front of the stateless double: it adds that
 * `mcp-session-id` to its answers, removes it from what it forwards, and answers a session `DELETE` itself.
 */
export async function forwarder(
  target: string,
  options: { tls?: { key: string; cert: string }; sessionId?: string } = {},
): Promise<{ url: string; requests: ForwardedRequest[] }> {
  const t = new URL(target);
  const requests: ForwardedRequest[] = [];
  const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    requests.push({ method: req.method ?? "", headers: { ...req.headers } });
    if (options.sessionId !== undefined && req.method === "DELETE") {
      res.writeHead(200).end();
      return;
    }
    const { "mcp-session-id": _session, ...forwarded } = req.headers;
    const up = request(
      {
        host: t.hostname,
        port: t.port,
        path: req.url,
        method: req.method,
        headers: { ...forwarded, host: t.host },
      },
      (upRes) => {
        const headers = { ...upRes.headers };
        if (options.sessionId !== undefined) headers["mcp-session-id"] = options.sessionId;
        res.writeHead(upRes.statusCode ?? 502, headers);
        upRes.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  };
  const server =
    options.tls === undefined ? createHttpServer(handler) : createHttpsServer(options.tls, handler);
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => sockets.add(s));
  const port = await listen(server);
  open.push(closer(server, sockets));
  return {
    url: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}${t.pathname}`,
    requests,
  };
}

/** A loopback HTTP proxy that tunnels CONNECT requests and records their targets. */
export async function connectProxy(): Promise<{ url: string; connects: string[] }> {
  const connects: string[] = [];
  const server = createHttpServer((_req, res) => res.writeHead(405).end());
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => sockets.add(s));
  server.on("connect", (req, client: Socket, head: Buffer) => {
    connects.push(req.url ?? "");
    sockets.add(client);
    const [host, port] = (req.url ?? "").split(":");
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  const port = await listen(server);
  open.push(closer(server, sockets));
  return { url: `http://127.0.0.1:${port}`, connects };
}

/** A self-signed certificate for 127.0.0.1, made with openssl. */
export async function selfSignedCert(dir: string): Promise<{ key: string; cert: string }> {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  await execa("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
  ]);
  return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
}
