import { startMcpHttpServer } from "@icode/mcp-server-double";
import { tmpDir } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import type { Toolset } from "../../src/tool";
import { buildToolset } from "../../src/tools/build-toolset";
import { closeTestServers, connectProxy, forwarder, mcpProfile, selfSignedCert } from "./mcp-support";
import { callContext, loadProfile, toolsetOptions, type Workspace, workspace } from "./support";

const toolsets: Toolset[] = [];
const doubles: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(toolsets.splice(0).map((t) => t.close()));
  await Promise.all(doubles.splice(0).map((d) => d.close()));
  await closeTestServers();
});

async function double(): Promise<string> {
  const server = await startMcpHttpServer({ tools: ["echo"], prompts: false });
  doubles.push(server);
  return server.url;
}

async function build(ws: Workspace, servers: Record<string, unknown>[], env: Record<string, string> = {}) {
  const toolset = await buildToolset(
    toolsetOptions(ws, await loadProfile(ws, mcpProfile(servers)), {
      env: { PATH: process.env["PATH"], ...env },
    }),
  );
  toolsets.push(toolset);
  return toolset;
}

const echo = (toolset: Toolset, ws: Workspace) =>
  toolset.tools.find((t) => t.name === "echo")?.execute({ text: "hi" }, callContext(ws));

describe("MCP over streamable HTTP", () => {
  it("sends headers with their templates resolved, or literally with resolve_header_templates off", async () => {
    const ws = workspace();
    const front = await forwarder(await double());
    const toolset = await build(
      ws,
      [
        { name: "a", transport: "http", url: front.url, headers: { authorization: "Bearer {{TOKEN}}" } },
        {
          name: "b",
          transport: "http",
          url: front.url,
          tool_name_prefix: "b",
          resolve_header_templates: false,
          headers: { "x-literal": "{{TOKEN}}" },
        },
      ],
      { TOKEN: "s3cret" },
    );
    expect(toolset.warnings).toEqual([]);
    expect(await echo(toolset, ws)).toEqual({ ok: true, output: "hi" });
    const sent = front.requests.map((r) => r.headers);
    expect(sent.filter((h) => h["authorization"] === "Bearer s3cret").length).toBeGreaterThan(0);
    expect(sent.filter((h) => h["x-literal"] === "{{TOKEN}}").length).toBeGreaterThan(0);
    expect(
      sent.some((h) => JSON.stringify(h).includes("{{TOKEN}}") && h["authorization"] !== undefined),
    ).toBe(false);
  });

  it("goes through the proxy of the engine's environment, unless bypass_proxy is on", async () => {
    const ws = workspace();
    const url = await double();
    const proxy = await connectProxy();
    const target = new URL(url).host;
    const proxied = await build(ws, [{ name: "via", transport: "http", url }], { http_proxy: proxy.url });
    expect(await echo(proxied, ws)).toEqual({ ok: true, output: "hi" });
    expect(proxy.connects).toContain(target);
    const seen = proxy.connects.length;
    const direct = await build(ws, [{ name: "direct", transport: "http", url, bypass_proxy: true }], {
      http_proxy: proxy.url,
    });
    expect(await echo(direct, ws)).toEqual({ ok: true, output: "hi" });
    const excluded = await build(ws, [{ name: "excluded", transport: "http", url }], {
      HTTP_PROXY: proxy.url,
      NO_PROXY: "127.0.0.1",
    });
    expect(await echo(excluded, ws)).toEqual({ ok: true, output: "hi" });
    expect(proxy.connects).toHaveLength(seen);
  });

  it("checks certificates, and accepts a self-signed one with verify_ssl off", async () => {
    const ws = workspace();
    const tls = await selfSignedCert(tmpDir());
    const front = await forwarder(await double(), { tls });
    const strict = await build(ws, [{ name: "strict", transport: "http", url: front.url }]);
    expect(strict.tools).toEqual([]);
    expect(strict.warnings).toEqual([
      {
        code: "mcp_server_unavailable",
        message: expect.stringContaining('MCP server "strict" (http) is not available'),
      },
    ]);
    const lax = await build(ws, [{ name: "lax", transport: "http", url: front.url, verify_ssl: false }]);
    expect(lax.warnings).toEqual([]);
    expect(await echo(lax, ws)).toEqual({ ok: true, output: "hi" });
  });

  it("ends the session on close with terminate_on_close, and keeps it otherwise", async () => {
    const ws = workspace();
    const url = await double();
    const ending = await forwarder(url, { sessionId: "s-1" });
    const keeping = await forwarder(url, { sessionId: "s-2" });
    const toolset = await build(ws, [
      { name: "ending", transport: "http", url: ending.url, tool_name_prefix: "e" },
      {
        name: "keeping",
        transport: "http",
        url: keeping.url,
        tool_name_prefix: "k",
        terminate_on_close: false,
      },
    ]);
    expect(toolset.warnings).toEqual([]);
    await toolset.close();
    expect(
      ending.requests.filter((r) => r.method === "DELETE").map((r) => r.headers["mcp-session-id"]),
    ).toEqual(["s-1"]);
    expect(keeping.requests.some((r) => r.method === "DELETE")).toBe(false);
  });

  it("warns about an endpoint that does not answer MCP", async () => {
    const ws = workspace();
    const url = new URL(await double());
    const toolset = await build(ws, [{ name: "wrong", transport: "http", url: `${url.origin}/not-mcp` }]);
    expect(toolset.warnings).toEqual([
      {
        code: "mcp_server_unavailable",
        message: expect.stringContaining('MCP server "wrong" (http) is not available'),
      },
    ]);
  });
});
