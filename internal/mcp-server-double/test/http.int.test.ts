import { request } from "node:http";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { execa } from "execa";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { mcpHttpCommand, readMcpCallLog, startMcpHttpServer } from "../src/index";
import { httpClient, requireBuilt, resultText } from "./support/clients";
import { exerciseEveryTool } from "./support/exercise";

type Closable = { close(): Promise<void> };
const open: Closable[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

function post(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end("{}");
  });
}

describe("the in-process streamable-HTTP MCP double", () => {
  it("lists and answers every tool, the prompt and the instructions, and logs each call", async () => {
    const log = join(tmpDir(), "calls.jsonl");
    const server = await startMcpHttpServer({ log });
    open.push(server);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
    const client = await httpClient(server.url);
    open.push(client);
    const calls = await exerciseEveryTool(client);
    const entries = readMcpCallLog(log);
    expect(entries).toHaveLength(calls);
    expect(entries.every((e) => e.transport === "http" && e.pid === process.pid)).toBe(true);
  });

  it("counts across requests and clients of one server process", async () => {
    const server = await startMcpHttpServer({ tools: ["count"] });
    open.push(server);
    const a = await httpClient(server.url);
    const b = await httpClient(server.url);
    open.push(a, b);
    await a.callTool({ name: "count", arguments: {} });
    await b.callTool({ name: "count", arguments: {} });
    expect(resultText(await a.callTool({ name: "count", arguments: {} }))).toBe("3");
  });

  it("answers only on /mcp, and only to a localhost Host", async () => {
    const server = await startMcpHttpServer();
    open.push(server);
    const json = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    expect(await post(`http://127.0.0.1:${server.port}/other`, json)).toBe(404);
    expect(await post(server.url, { ...json, host: "evil.example:80" })).toBe(403);
  });
});

describe("the HTTP MCP double in its own process (dist/http.js)", () => {
  beforeAll(requireBuilt);

  it("prints its URL, serves the tools with a prefix, logs calls with its pid, and stops on SIGTERM", async () => {
    const log = join(tmpDir(), "calls.jsonl");
    const { command, args } = mcpHttpCommand({ tools: ["echo"], prefix: "h_", log });
    const child = execa(command, args, { reject: false, buffer: false });
    const first = await new Promise<string>((resolve, reject) => {
      let seen = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes("\n")) resolve(seen.split("\n")[0]!);
      });
      child.once("exit", (code) => reject(new Error(`dist/http.js exited with ${code} before listening`)));
    });
    const { url, pid } = JSON.parse(first) as { url: string; pid: number };
    expect(pid).toBe(child.pid);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const client = await httpClient(url);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["h_echo"]);
    expect(resultText(await client.callTool({ name: "h_echo", arguments: { text: "far" } }))).toBe("far");
    await client.close();
    expect(readMcpCallLog(log)).toEqual([
      expect.objectContaining({
        tool: "h_echo",
        pid: child.pid,
        transport: "http",
        arguments: { text: "far" },
      }),
    ]);

    child.kill("SIGTERM");
    const result = await child;
    expect(result.exitCode).toBe(0);
  });
});
