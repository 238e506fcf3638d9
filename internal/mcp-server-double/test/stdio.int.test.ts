import { join } from "node:path";
import { tmpDir, waitUntil } from "@icode/test-utils";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { readMcpCallLog } from "../src/index";
import { requireBuilt, resultText, stdioClient } from "./support/clients";
import { exerciseEveryTool } from "./support/exercise";

type Closable = { close(): Promise<void> };
const open: Closable[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

beforeAll(requireBuilt);

describe("the stdio MCP double", () => {
  it("lists and answers every tool, the prompt and the instructions, and logs each call", async () => {
    const log = join(tmpDir(), "calls.jsonl");
    const { client, transport } = await stdioClient({ log });
    open.push(client);
    const calls = await exerciseEveryTool(client);

    const entries = readMcpCallLog(log);
    expect(entries).toHaveLength(calls);
    expect(entries.map((e) => e.tool)).toEqual(["echo", "add", "slow", "big", "fail", "count", "count"]);
    expect(new Set(entries.map((e) => e.pid))).toEqual(new Set([transport.pid]));
    expect(entries.every((e) => e.transport === "stdio" && e.server === "mcp-double")).toBe(true);
    expect(entries.find((e) => e.tool === "fail")).toMatchObject({
      isError: true,
      arguments: { message: "disk on fire" },
    });
    expect(entries.find((e) => e.tool === "echo")).toMatchObject({
      isError: false,
      arguments: { text: "hello there" },
    });
  });

  it("counts per process: a second process starts again at 1, and the log tells the processes apart", async () => {
    const log = join(tmpDir(), "calls.jsonl");
    const a = await stdioClient({ log });
    const b = await stdioClient({ log });
    open.push(a.client, b.client);
    await a.client.callTool({ name: "count", arguments: {} });
    const a2 = await a.client.callTool({ name: "count", arguments: {} });
    const b1 = await b.client.callTool({ name: "count", arguments: {} });
    expect(resultText(a2)).toBe("2");
    expect(resultText(b1)).toBe("1");
    const pids = readMcpCallLog(log).map((e) => e.pid);
    expect(pids.filter((pid) => pid === a.transport.pid)).toHaveLength(2);
    expect(pids.filter((pid) => pid === b.transport.pid)).toHaveLength(1);
  });

  it("offers only the chosen tools, prefixed, with no prompt and no instructions", async () => {
    const { client } = await stdioClient({
      tools: ["echo", "count"],
      prefix: "dup_",
      prompts: false,
      instructions: null,
    });
    open.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["dup_echo", "dup_count"]);
    expect(client.getInstructions()).toBeUndefined();
    expect(client.getServerCapabilities()?.prompts).toBeUndefined();
    const echo = await client.callTool({ name: "dup_echo", arguments: { text: "x" } });
    expect(resultText(echo)).toBe("x");
    await expect(client.callTool({ name: "echo", arguments: { text: "x" } })).rejects.toThrow(
      /Tool echo not found/,
    );
  });

  it("takes its options from the environment (MCP_DOUBLE_*) when no flag is given", async () => {
    const log = join(tmpDir(), "calls.jsonl");
    const env = { MCP_DOUBLE_TOOLS: "add", MCP_DOUBLE_NAME: "env-named", MCP_DOUBLE_LOG: log };
    const { client } = await stdioClient(null, env);
    open.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["add"]);
    expect(client.getServerVersion()?.name).toBe("env-named");
    await client.callTool({ name: "add", arguments: { a: 1, b: 1 } });
    expect(readMcpCallLog(log)).toEqual([expect.objectContaining({ tool: "add", server: "env-named" })]);
  });

  it("logs a slow call that the client cancelled as an error", async () => {
    const log = join(tmpDir(), "calls.jsonl");
    const { client } = await stdioClient({ log });
    open.push(client);
    const controller = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { ms: 600_000 } }, { signal: controller.signal });
    // Wait until the server surely runs the call: a later request on the same pipe was answered.
    await client.callTool({ name: "echo", arguments: { text: "after" } });
    controller.abort();
    await expect(call).rejects.toThrow();
    expect(await waitUntil(() => readMcpCallLog(log).some((e) => e.tool === "slow"), 30_000)).toBe(true);
    expect(readMcpCallLog(log).find((e) => e.tool === "slow")).toMatchObject({
      isError: true,
      arguments: { ms: 600_000 },
    });
  });
});
