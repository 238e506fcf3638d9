import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { appendCallLog, type McpCallLogEntry, readMcpCallLog } from "./call-log";

const entry = (tool: string, args: Record<string, unknown> = {}): McpCallLogEntry => ({
  event: "call",
  pid: 42,
  ts: 1,
  server: "s",
  transport: "stdio",
  tool,
  arguments: args,
  isError: false,
});

describe("the call log", () => {
  it("reads back what was appended, one entry a line", () => {
    const file = join(tmpDir(), "calls.jsonl");
    appendCallLog(file, entry("echo", { text: "hi" }));
    appendCallLog(file, entry("count"));
    expect(readMcpCallLog(file)).toEqual([entry("echo", { text: "hi" }), entry("count")]);
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(3);
  });

  it("is empty when the file does not exist", () => {
    expect(readMcpCallLog(join(tmpDir(), "none.jsonl"))).toEqual([]);
  });

  it("keeps lines under 4 KiB by shortening large arguments", () => {
    const file = join(tmpDir(), "calls.jsonl");
    appendCallLog(file, entry("echo", { text: "x".repeat(100_000), list: Array(500).fill("y".repeat(50)) }));
    const line = readFileSync(file, "utf8").trimEnd();
    expect(Buffer.byteLength(line)).toBeLessThan(4096);
    const [read] = readMcpCallLog(file);
    expect(read?.tool).toBe("echo");
    expect(String(read?.arguments["text"])).toMatch(/^x+…\(100000\)$/);
  });

  it("rejects a line that is not an entry with log_invalid and the line number", () => {
    const file = join(tmpDir(), "calls.jsonl");
    appendCallLog(file, entry("echo"));
    appendFileSync(file, '{"event":"other"}\n');
    expect(() => readMcpCallLog(file)).toThrow(expect.objectContaining({ code: "log_invalid" }));
    expect(() => readMcpCallLog(file)).toThrow(/calls\.jsonl:2/);
  });
});
