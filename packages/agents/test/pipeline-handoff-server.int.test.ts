import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { tmpDir } from "@icode/test-utils";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "..", "dist", "pipeline", "handoff-server.js");

/** The built handoff server over its stdio, spoken to as an MCP client would. */
async function server(env: Record<string, string>) {
  const child = execa(process.execPath, [SCRIPT], { env, extendEnv: false, stdin: "pipe", stdout: "pipe" });
  const lines = createInterface({ input: child.stdout! });
  const waiting = new Map<number, (value: Record<string, unknown>) => void>();
  lines.on("line", (line) => {
    const message = JSON.parse(line) as { id: number } & Record<string, unknown>;
    waiting.get(message.id)?.(message);
  });
  let id = 0;
  const request = (method: string, params: unknown = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      id += 1;
      waiting.set(id, resolve);
      child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  return {
    request,
    close: async () => {
      child.stdin!.end();
      await child.catch(() => undefined);
    },
  };
}

describe("the engine's handoff MCP server (dist/pipeline/handoff-server.js)", () => {
  it("offers submit_handoff with the node's schema and report_blocked, and appends each call to the file", async () => {
    const dir = tmpDir("handoff-server-");
    const file = join(dir, "calls.jsonl");
    const schema = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] };
    const schemaFile = join(dir, "schema.json");
    const s = await server({
      ICODE_HANDOFF_FILE: file,
      ICODE_HANDOFF_SCHEMA_FILE: schemaFile,
      ICODE_HANDOFF_SCHEMA: JSON.stringify(schema),
    });
    try {
      const init = await s.request("initialize", { protocolVersion: "2025-06-18", capabilities: {} });
      expect(init["result"]).toMatchObject({ protocolVersion: "2025-06-18", capabilities: { tools: {} } });
      const list = (await s.request("tools/list")) as {
        result: { tools: { name: string; inputSchema: unknown }[] };
      };
      expect(list.result.tools.map((t) => t.name)).toEqual(["submit_handoff", "report_blocked"]);
      expect(list.result.tools[0]!.inputSchema).toEqual(schema);
      // A continued session's next node: the schema file says what submit_handoff takes now.
      const next = { type: "object", properties: { verdict: { enum: ["ok", "no"] } }, required: ["verdict"] };
      writeFileSync(schemaFile, JSON.stringify(next));
      const relisted = (await s.request("tools/list")) as { result: { tools: { inputSchema: unknown }[] } };
      expect(relisted.result.tools[0]!.inputSchema).toEqual(next);

      const submit = (await s.request("tools/call", {
        name: "submit_handoff",
        arguments: { summary: "done", extra: [1] },
      })) as { result: { isError: boolean } };
      expect(submit.result.isError).toBe(false);
      const empty = (await s.request("tools/call", {
        name: "report_blocked",
        arguments: { reason: " " },
      })) as {
        result: { isError: boolean };
      };
      expect(empty.result.isError).toBe(true);
      await s.request("tools/call", { name: "report_blocked", arguments: { reason: "no access" } });
      const unknown = (await s.request("tools/call", { name: "nope", arguments: {} })) as {
        result: { isError: boolean };
      };
      expect(unknown.result.isError).toBe(true);
      const missing = await s.request("resources/list");
      expect(missing["error"]).toMatchObject({ code: -32601 });

      const calls = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(calls.map(({ at: _at, ...c }) => c)).toEqual([
        { tool: "submit_handoff", handoff: { summary: "done", extra: [1] } },
        { tool: "report_blocked", reason: "no access" },
      ]);
    } finally {
      await s.close();
    }
  });
});
