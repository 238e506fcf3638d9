import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createAgentLog, logLine, MAX_LOG_LINE_BYTES } from "./log";
import { finishedTurns, readAgentLog, receivedPrompts } from "./log-entry";

describe("the agent log", () => {
  it("appends one line per event with pid, time and a sequence number, and reads it back", () => {
    const file = join(tmpDir(), "agent.jsonl");
    const log = createAgentLog(file, 7);
    log({ event: "start", script: null, source: "flag" });
    log({
      event: "request",
      method: "session/prompt",
      sessionId: "s",
      prompt: "hi",
      promptChars: 2,
      turn: 0,
    });
    log({ event: "stop", sessionId: "s", turn: 0, stopReason: "end_turn", modelId: null, modeId: null });
    const entries = readAgentLog(file);
    expect(entries.map((e) => [e.event, e.pid, e.seq])).toEqual([
      ["start", 7, 0],
      ["request", 7, 1],
      ["stop", 7, 2],
    ]);
    expect(receivedPrompts(entries).map((e) => e.prompt)).toEqual(["hi"]);
    expect(finishedTurns(entries).map((e) => e.stopReason)).toEqual(["end_turn"]);
  });

  it("does nothing without a file", () => {
    expect(() => createAgentLog(undefined, 1)({ event: "start" })).not.toThrow();
  });

  it("keeps every line below 4 KiB, shortening long values", () => {
    const line = logLine({
      event: "request",
      method: "session/new",
      pid: 1,
      ts: 1,
      seq: 0,
      mcpServers: Array.from({ length: 100 }, (_, i) => ({
        name: `s${i}`,
        type: "stdio",
        command: "x".repeat(500),
      })),
    });
    expect(Buffer.byteLength(line)).toBeLessThan(MAX_LOG_LINE_BYTES);
    const file = join(tmpDir(), "agent.jsonl");
    appendFileSync(file, `${line}\n`);
    expect(readAgentLog(file)[0]).toMatchObject({ event: "request", method: "session/new" });
    const prompt = logLine({
      event: "request",
      method: "session/prompt",
      prompt: "p".repeat(50_000),
      pid: 1,
      ts: 1,
      seq: 1,
    });
    expect(Buffer.byteLength(prompt)).toBeLessThan(MAX_LOG_LINE_BYTES);
  });

  it("rejects a line that is not an entry with log_invalid and its line number", () => {
    const file = join(tmpDir(), "agent.jsonl");
    createAgentLog(file, 1)({ event: "start", script: null, source: "flag" });
    appendFileSync(file, '{"event":"start"}\n');
    expect(() => readAgentLog(file)).toThrow(expect.objectContaining({ code: "log_invalid" }));
    expect(() => readAgentLog(file)).toThrow(/agent\.jsonl:2/);
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(3);
    expect(readAgentLog(join(tmpDir(), "none.jsonl"))).toEqual([]);
  });
});
