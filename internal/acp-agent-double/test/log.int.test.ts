import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AgentLogEntry,
  agentCommand,
  agentEnv,
  finishedTurns,
  readAgentLog,
  receivedPrompts,
} from "../src/index";
import {
  type AgentUnderTest,
  messageText,
  requireBuilt,
  startAgent,
  startSession,
} from "./support/acp-client";

const running: AgentUnderTest[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.close()));
});

describe("the agent log", () => {
  it("has a start, every request, every update sent, the stop and the exit, in order", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await startSession(
      { turns: [{ steps: [{ message: ["a", "b"] }, { plan: [{ content: "p" }] }] }] },
      { log },
    );
    await agent.prompt(agent.sessionId, "count the lines");
    expect(await agent.close()).toEqual({ exitCode: 0 });
    const entries = readAgentLog(log);
    expect(entries.map((e) => e.event)).toEqual([
      "start",
      "request",
      "request",
      "request",
      "notification",
      "notification",
      "notification",
      "stop",
      "exit",
    ]);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i));
    expect(new Set(entries.map((e) => e.pid))).toEqual(new Set([agent.child.pid]));
    expect(entries[0]).toMatchObject({ event: "start", source: "flag", script: null });
    expect(receivedPrompts(entries)).toEqual([
      expect.objectContaining({
        sessionId: agent.sessionId,
        prompt: "count the lines",
        promptChars: 15,
        turn: 0,
      }),
    ]);
    const sent = entries.filter((e) => e.event === "notification");
    expect(sent.map((e) => e.event === "notification" && [e.update, e.text])).toEqual([
      ["agent_message_chunk", "a"],
      ["agent_message_chunk", "b"],
      ["plan", undefined],
    ]);
    expect(sent).toHaveLength(agent.updatesOf(agent.sessionId).length);
    expect(entries.at(-1)).toMatchObject({ event: "exit", code: 0, reason: "stdin_closed" });
  });

  it("counts turns across several agent processes writing one file at once", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const chunks = Array.from({ length: 40 }, (_, i) => `chunk ${i} `.repeat(20));
    const script = { name: "parallel", turns: [{ steps: [{ message: chunks }] }] };
    const agents = await Promise.all([0, 1, 2, 3].map(() => startSession(script, { log, inline: true })));
    running.push(...agents);
    await Promise.all(agents.map((a) => a.prompt(a.sessionId, "one")));
    await Promise.all(agents.map((a) => a.prompt(a.sessionId, "two")));
    await Promise.all(running.splice(0).map((a) => a.close()));

    const entries: AgentLogEntry[] = readAgentLog(log); // throws on any torn or interleaved line
    const pids = agents.map((a) => a.child.pid);
    expect(new Set(entries.map((e) => e.pid))).toEqual(new Set(pids));
    for (const pid of pids) {
      const own = entries.filter((e) => e.pid === pid);
      expect(own.map((e) => e.seq)).toEqual(own.map((_, i) => i));
      expect(finishedTurns(own).map((e) => e.turn)).toEqual([0, 1]);
      expect(own.filter((e) => e.event === "notification")).toHaveLength(80);
      expect(own[0]).toMatchObject({ event: "start", script: "parallel", source: "env_inline" });
    }
    expect(finishedTurns(entries)).toHaveLength(8);
  });

  it("logs the exit on SIGTERM", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await startAgent({ turns: [{ steps: [{ message: "ok" }] }] }, { log });
    await agent.initialize();
    agent.child.kill("SIGTERM");
    const result = await agent.child;
    expect(result.exitCode).toBe(143);
    expect(readAgentLog(log).at(-1)).toMatchObject({
      event: "exit",
      code: 143,
      signal: "SIGTERM",
      reason: "signal",
    });
  });
});

describe("the agent process", () => {
  it("answers the fast-path script from ACP_DOUBLE_SCRIPT", async () => {
    const agent = await startSession({ turns: [{ steps: [{ message: "ok" }] }] }, { inline: true });
    running.push(agent);
    expect(await agent.prompt(agent.sessionId, "x")).toEqual({ stopReason: "end_turn" });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("ok");
  });

  it("exits 2 naming the problem when its script is missing or invalid", async () => {
    requireBuilt();
    const log = join(tmpDir(), "agent.jsonl");
    const { command, args } = agentCommand();
    const missing = await execa(command, args, {
      reject: false,
      env: { ACP_DOUBLE_SCRIPT: "", ...agentEnv({ log }) },
    });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("pass --script FILE or set ACP_DOUBLE_SCRIPT");

    const invalid = await execa(command, args, {
      reject: false,
      env: agentEnv({ script: '{"turns":[{"steps":[{"message":"a","stop":"end_turn"}]}]}', log }),
    });
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toContain("a step has exactly one kind, found message and stop");
    expect(readAgentLog(log).map((e) => e.event === "exit" && e.reason)).toEqual(["fatal", "fatal"]);
  });
});
