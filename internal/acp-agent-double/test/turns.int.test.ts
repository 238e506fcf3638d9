import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir, waitUntil } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { type AcpDoubleScriptInput, readAgentLog } from "../src/index";
import {
  type AgentUnderTest,
  messageText,
  rpcError,
  type StartOptions,
  startSession,
} from "./support/acp-client";

const running: AgentUnderTest[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.close()));
});
async function session(script: AcpDoubleScriptInput, options: StartOptions = {}) {
  const agent = await startSession(script, options);
  running.push(agent);
  return agent;
}
const turn = (...steps: NonNullable<AcpDoubleScriptInput["turns"]>[number]["steps"]) => ({
  turns: [{ steps }],
});

describe("a normal turn", () => {
  it("sends its updates in script order and ends with end_turn and the summed usage", async () => {
    const agent = await session(
      turn(
        { thought: "thinking" },
        { plan: [{ content: "read", status: "in_progress", priority: "high" }, { content: "write" }] },
        { message: ["Hel", "lo"] },
        {
          toolCall: {
            id: "t1",
            title: "Read a.ts",
            kind: "read",
            status: "in_progress",
            rawInput: { path: "a.ts" },
            locations: [{ path: "/w/a.ts", line: 3 }],
            updates: [{ status: "completed", content: "42 lines", rawOutput: { lines: 42 } }],
          },
        },
        { usage: { inputTokens: 100, outputTokens: 20, cachedReadTokens: 50, cost: { amount: 0.25 } } },
        { usage: { inputTokens: 10, outputTokens: 5, size: 1000, used: 999 } },
        { message: "done" },
      ),
    );
    expect(await agent.prompt(agent.sessionId, "go")).toEqual({
      stopReason: "end_turn",
      usage: {
        totalTokens: 185,
        inputTokens: 110,
        outputTokens: 25,
        cachedReadTokens: 50,
        cachedWriteTokens: 0,
        thoughtTokens: 0,
      },
    });
    const updates = agent.updatesOf(agent.sessionId);
    expect(updates.map((u) => u.sessionUpdate)).toEqual([
      "agent_thought_chunk",
      "plan",
      "agent_message_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call_update",
      "usage_update",
      "usage_update",
      "agent_message_chunk",
    ]);
    expect(updates[1]).toMatchObject({
      entries: [
        { content: "read", status: "in_progress", priority: "high" },
        { content: "write", status: "pending", priority: "medium" },
      ],
    });
    expect(updates[2]).toMatchObject({ content: { type: "text", text: "Hel" } });
    expect((updates[2] as { messageId?: string }).messageId).toBe(
      (updates[3] as { messageId?: string }).messageId,
    );
    expect(updates[4]).toEqual({
      sessionUpdate: "tool_call",
      toolCallId: "t1",
      title: "Read a.ts",
      kind: "read",
      status: "in_progress",
      rawInput: { path: "a.ts" },
      locations: [{ path: "/w/a.ts", line: 3 }],
    });
    expect(updates[5]).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "42 lines" } }],
      rawOutput: { lines: 42 },
    });
    expect(updates[6]).toEqual({
      sessionUpdate: "usage_update",
      used: 170,
      size: 200_000,
      cost: { amount: 0.25, currency: "USD" },
    });
    expect(updates[7]).toEqual({ sessionUpdate: "usage_update", used: 999, size: 1000 });
    expect(messageText(updates)).toBe("Hellodone");
  });

  it("echoes the prompt text it received", async () => {
    const agent = await session(turn({ echoPrompt: true }));
    await agent.connection.agent.request("session/prompt", {
      sessionId: agent.sessionId,
      prompt: [
        { type: "text", text: "Summarize" },
        { type: "resource", resource: { uri: "file:///n.md", text: "notes" } },
      ],
    });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("Summarize\nnotes");
  });

  it("ends with the scripted stop reasons, runs no step after a stop, and can end empty", async () => {
    const agent = await session({
      turns: [
        { steps: [{ message: "no" }, { stop: "refusal" }, { message: "never" }] },
        { steps: [{ message: "long" }, { stop: "max_tokens" }] },
        { steps: [{ empty: true }, { message: "never" }] },
        { steps: [{ finalJson: { status: "done", n: 1 } }, { message: "never" }] },
      ],
    });
    const stops: string[] = [];
    for (let i = 0; i < 4; i++) stops.push((await agent.prompt(agent.sessionId, "x")).stopReason);
    expect(stops).toEqual(["refusal", "max_tokens", "end_turn", "end_turn"]);
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe('nolong{"status":"done","n":1}');
  });

  it("answers the prompt with a scripted JSON-RPC error", async () => {
    const agent = await session(
      turn({ message: "partial" }, { error: { code: -32000, message: "login expired" } }),
    );
    expect(await rpcError(agent.prompt(agent.sessionId, "x"))).toEqual({
      code: -32000,
      message: "login expired",
    });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("partial");
  });

  it("writes scripted text to its stderr", async () => {
    const agent = await session(turn({ stderr: "warning: rate limited\n" }, { message: "ok" }));
    await agent.prompt(agent.sessionId, "x");
    expect(await waitUntil(() => agent.stderr().includes("warning: rate limited\n"), 30_000)).toBe(true);
  });
});

describe("permission requests", () => {
  const PERMISSION = turn(
    { toolCall: { id: "edit-1", title: "Edit a.ts", kind: "edit" } },
    {
      permission: { title: "Edit a.ts?" },
      onAllowed: [{ message: "allowed" }],
      onRejected: [{ message: "rejected" }],
    },
    { message: "!" },
  );

  it("ask about the last tool call and branch on allowed", async () => {
    const agent = await session(PERMISSION);
    expect(await agent.prompt(agent.sessionId, "x")).toEqual({ stopReason: "end_turn" });
    expect(agent.permissionRequests).toEqual([
      {
        sessionId: agent.sessionId,
        toolCall: { toolCallId: "edit-1", title: "Edit a.ts?", kind: "other", status: "pending" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
    ]);
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("allowed!");
  });

  it("branch on rejected", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await session(PERMISSION, {
      log,
      permission: () => ({ outcome: { outcome: "selected", optionId: "reject" } }),
    });
    await agent.prompt(agent.sessionId, "x");
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("rejected!");
    expect(readAgentLog(log).find((e) => e.event === "client_request")).toMatchObject({
      method: "session/request_permission",
      outcome: "rejected",
    });
  });

  it("count an option the agent did not offer as rejected, and log it", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await session(PERMISSION, {
      log,
      permission: () => ({ outcome: { outcome: "selected", optionId: "bogus" } }),
    });
    await agent.prompt(agent.sessionId, "x");
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("rejected!");
    expect(readAgentLog(log).find((e) => e.event === "client_request")).toMatchObject({
      outcome: "rejected",
      error: "unknown option bogus",
    });
  });

  it("end the turn as cancelled when the client answers cancelled, unless an onCancelled branch says otherwise", async () => {
    const cancelled = { permission: () => ({ outcome: { outcome: "cancelled" as const } }) };
    const plain = await session(PERMISSION, cancelled);
    expect(await plain.prompt(plain.sessionId, "x")).toEqual({ stopReason: "cancelled" });
    expect(messageText(plain.updatesOf(plain.sessionId))).toBe("");

    const branching = await session(
      turn({ permission: { toolCallId: "p" }, onCancelled: [{ message: "carrying on" }] }, { message: "!" }),
      cancelled,
    );
    expect(await branching.prompt(branching.sessionId, "x")).toEqual({ stopReason: "end_turn" });
    expect(messageText(branching.updatesOf(branching.sessionId))).toBe("carrying on!");
  });
});

describe("file system requests to the client", () => {
  it("read and write real files through the client, relative paths from the session's cwd", async () => {
    const agent = await session(
      turn(
        { writeFile: { path: "out/notes.md", content: "line 1\nline 2\nline 3" } },
        { readFile: { path: "in.txt", line: 2, limit: 1 }, onOk: [{ message: " (read ok)" }] },
      ),
    );
    writeFileSync(join(agent.dir, "in.txt"), "first\nsecond\nthird");
    await agent.prompt(agent.sessionId, "x");
    expect(readFileSync(join(agent.dir, "out", "notes.md"), "utf8")).toBe("line 1\nline 2\nline 3");
    expect(agent.fsRequests).toEqual([
      { method: "fs/write_text_file", path: join(agent.dir, "out", "notes.md") },
      { method: "fs/read_text_file", path: join(agent.dir, "in.txt") },
    ]);
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe(
      `wrote 20 characters to ${join(agent.dir, "out", "notes.md")}second (read ok)`,
    );
  });

  it("take the error branch when the client fails the request or does not offer it", async () => {
    const failing = await session(
      turn({ readFile: { path: "missing.txt" }, onError: [{ message: " -> gave up" }] }),
    );
    await failing.prompt(failing.sessionId, "x");
    expect(messageText(failing.updatesOf(failing.sessionId))).toMatch(/^read failed: .* -> gave up$/);

    const noFs = await session(
      turn({ writeFile: { path: "a", content: "b" }, onError: [{ stop: "refusal" }] }),
      {
        fs: { readTextFile: false, writeTextFile: false },
      },
    );
    expect(await noFs.prompt(noFs.sessionId, "x")).toEqual({ stopReason: "refusal" });
    expect(messageText(noFs.updatesOf(noFs.sessionId))).toBe(
      "write failed: the client does not offer fs/write_text_file",
    );
    expect(noFs.fsRequests).toEqual([]);
  });
});

describe("cancellation, hangs and crashes", () => {
  it("hang: session/cancel ends the turn with cancelled", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await session(turn({ message: "working" }, { hang: true }), { log });
    const prompt = agent.prompt(agent.sessionId, "x");
    expect(await waitUntil(() => agent.updatesOf(agent.sessionId).length === 1, 30_000)).toBe(true);
    await agent.connection.agent.notify("session/cancel", { sessionId: agent.sessionId });
    expect(await prompt).toEqual({ stopReason: "cancelled" });
    expect(readAgentLog(log).filter((e) => e.event === "notification_received")).toEqual([
      expect.objectContaining({ method: "session/cancel", sessionId: agent.sessionId }),
    ]);
    expect(readAgentLog(log).find((e) => e.event === "stop")).toMatchObject({ stopReason: "cancelled" });
  });

  it("a long delay is cut short by session/cancel", async () => {
    const agent = await session(turn({ delay: 600_000 }, { message: "never" }));
    const prompt = agent.prompt(agent.sessionId, "x");
    await agent.connection.agent.notify("session/cancel", { sessionId: agent.sessionId });
    expect(await prompt).toEqual({ stopReason: "cancelled" });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("");
  });

  it("hang with ignoreCancel keeps hanging after session/cancel", async () => {
    const agent = await session({
      turns: [{ when: { promptIncludes: "stuck" }, steps: [{ hang: { ignoreCancel: true } }] }],
      defaultTurn: { steps: [{ message: "alive" }] },
    });
    let settled = false;
    const stuck = agent.prompt(agent.sessionId, "stuck");
    stuck.then(
      () => {
        settled = true;
      },
      () => {},
    );
    await agent.connection.agent.notify("session/cancel", { sessionId: agent.sessionId });
    // Messages are handled in order: once a later request is answered, the cancel was seen too.
    const other = await agent.newSession();
    expect(await agent.prompt(other.sessionId, "x")).toEqual({ stopReason: "end_turn" });
    expect(settled).toBe(false);
    agent.child.kill("SIGKILL");
    await expect(stuck).rejects.toThrow();
  });

  it("crash: what came before arrives, the process exits with the code, the connection closes", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await session(turn({ message: "about to fail" }, { crash: 3 }, { message: "never" }), {
      log,
    });
    const prompt = agent.prompt(agent.sessionId, "x");
    await expect(prompt).rejects.toThrow();
    await agent.connection.closed;
    const result = await agent.child;
    expect(result.exitCode).toBe(3);
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("about to fail");
    expect(readAgentLog(log).at(-1)).toMatchObject({ event: "exit", code: 3, signal: null, reason: "crash" });
    expect(readAgentLog(log).some((e) => e.event === "stop")).toBe(false);
  });

  it("crash with a signal: the process dies of it", async () => {
    const agent = await session(turn({ message: "bye" }, { crash: "SIGKILL" }));
    await expect(agent.prompt(agent.sessionId, "x")).rejects.toThrow();
    const result = await agent.child;
    expect(result.signal).toBe("SIGKILL");
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("bye");
  });
});
