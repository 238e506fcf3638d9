import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { agentCommand, finishedTurns, receivedPrompts, writeAgentScript } from "@icode/acp-agent-double";
import { readMcpCallLog, startMcpHttpServer } from "@icode/mcp-server-double";
import { describe, expect, it } from "vitest";
import { createAcpAttempt } from "../src/acp/run-attempt";
import { AgentTranscriptSchema } from "../src/transcript";
import { acpProfile, agentPids, alive, attemptContext, doubleSetup } from "./support/acp";

const run = createAcpAttempt({ graceMs: 500 });

const TURN = {
  turns: [
    {
      steps: [
        { thought: "thinking" },
        { message: ["Look", "ing"] },
        { plan: [{ content: "read a.txt", status: "in_progress" as const, priority: "high" as const }] },
        {
          toolCall: {
            id: "t1",
            title: "Read a.txt",
            kind: "read" as const,
            status: "in_progress" as const,
            rawInput: { path: "a.txt" },
            updates: [{ status: "completed" as const, content: "abc" }],
          },
        },
        { message: "First part. " },
        { usage: { inputTokens: 10, outputTokens: 2, cost: { amount: 0.25, currency: "USD" } } },
        { message: "Done." },
        { stderr: "agent log line\n" },
      ],
    },
  ],
};

describe("an ACP attempt's turn", () => {
  it("returns the last message segment and reports each update as it comes", async () => {
    const setup = doubleSetup(TURN);
    const { context, io, transcripts } = await attemptContext(setup);
    const result = await run(context);

    expect(result).toEqual({ status: "completed", value: { text: "First part. Done.", data: null } });
    expect(io.activities.map((a) => a.kind)).toEqual([
      "thought",
      "text",
      "text",
      "plan",
      "tool_call",
      "tool_call",
      "text",
      "usage",
      "text",
      "usage",
    ]);
    expect(io.of("thought")).toEqual([{ kind: "thought", text: "thinking" }]);
    expect(io.of("plan")).toEqual([
      { kind: "plan", entries: [{ content: "read a.txt", status: "in_progress", priority: "high" }] },
    ]);
    expect(io.of("tool_call")).toEqual([
      {
        kind: "tool_call",
        tool_call_id: "t1",
        title: "Read a.txt",
        tool_kind: "read",
        status: "in_progress",
        input: { path: "a.txt" },
        result: null,
      },
      {
        kind: "tool_call",
        tool_call_id: "t1",
        title: "Read a.txt",
        tool_kind: "read",
        status: "completed",
        input: { path: "a.txt" },
        result: "abc",
      },
    ]);
    // usage_update: only the context size is known (total), with the cost; the prompt's answer splits it.
    expect(io.of("usage").map((a) => a.usage)).toEqual([
      {
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 12,
        cached_input_tokens: null,
        reasoning_tokens: null,
        cost: { amount: 0.25, currency: "USD" },
      },
      {
        input_tokens: 10,
        output_tokens: 2,
        total_tokens: 12,
        cached_input_tokens: 0,
        reasoning_tokens: 0,
        cost: { amount: 0.25, currency: "USD" },
      },
    ]);

    expect(transcripts).toHaveLength(1);
    const transcript = AgentTranscriptSchema.parse(transcripts[0]);
    expect(transcript).toMatchObject({
      node_id: "review",
      activation_id: "review#1",
      attempt: 1,
      runtime: "acp",
      profile: "Double",
      model: null,
      continued_from: null,
      outcome: "completed",
      stderr: { text: "agent log line\n", truncated: false },
      usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
    });
    expect(transcript.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Review the change."],
      ["assistant", "Looking"],
      ["assistant", ""],
      ["tool", "abc"],
      ["assistant", "First part. Done."],
    ]);
    expect(transcript.messages[2]?.tool_calls).toEqual([
      { id: "t1", name: "Read a.txt", input: { path: "a.txt" } },
    ]);
    expect(transcript.tool_calls).toMatchObject([
      {
        id: "t1",
        name: "Read a.txt",
        kind: "read",
        status: "completed",
        output: "abc",
        approval: "not_requested",
      },
    ]);

    const entries = setup.entries();
    expect(finishedTurns(entries)).toHaveLength(1);
    expect(agentPids(entries)).toHaveLength(1);
    for (const pid of agentPids(entries)) expect(alive(pid)).toBe(false);
  });

  it("returns every segment joined by a blank line with result_mode transcript", async () => {
    const setup = doubleSetup(TURN, { result_mode: "transcript" });
    const { context } = await attemptContext(setup);
    expect(await run(context)).toEqual({
      status: "completed",
      value: { text: "Looking\n\nFirst part. Done.", data: null },
    });
  });

  it("prompts with the node input and instructions_suffix, in a new session in the workspace", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ echoPrompt: true }] }] });
    const { context } = await attemptContext({
      ...setup,
      input: "Check src/app.ts",
      suffix: "Answer in one line.",
    });
    const result = await run(context);
    expect(result).toEqual({
      status: "completed",
      value: { text: "Check src/app.ts\n\nAnswer in one line.", data: null },
    });
    const entries = setup.entries();
    expect(receivedPrompts(entries).map((p) => p.prompt)).toEqual([
      "Check src/app.ts\n\nAnswer in one line.",
    ]);
    const created = entries.find((e) => e.event === "request" && e.method === "session/new");
    expect(created).toMatchObject({ cwd: setup.workspace, mcpServers: [] });
    const init = entries.find((e) => e.event === "request" && e.method === "initialize");
    expect(init).toMatchObject({ protocolVersion: 1, clientFs: { readTextFile: true, writeTextFile: true } });
  });

  it("starts a new agent process and session for every attempt", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ echoSession: true }] }] });
    const first = await run((await attemptContext(setup)).context);
    const second = await run((await attemptContext({ ...setup, attempt: 2 })).context);
    const idOf = (r: typeof first) => (r.status === "completed" ? JSON.parse(r.value.text).sessionId : null);
    expect(idOf(first)).not.toBe(idOf(second));
    expect(new Set(agentPids(setup.entries())).size).toBe(2);
  });

  it("starts the agent in acp.cwd, resolved against the workspace", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ echoSession: true }] }] }, { cwd: "sub" });
    mkdirSync(join(setup.workspace, "sub"));
    const result = await run((await attemptContext(setup)).context);
    expect(result.status === "completed" && JSON.parse(result.value.text).cwd).toBe(
      join(setup.workspace, "sub"),
    );
  });

  it("gives the agent a clean environment: the base variables, acp.env with templates, the depth", async () => {
    const setup = doubleSetup({ turns: [{ steps: [{ message: "ok" }] }] });
    const envFile = join(setup.dir, "child-env.txt");
    const script = writeAgentScript(join(setup.dir, "env-script.json"), {
      turns: [{ steps: [{ message: "ok" }] }],
    });
    const agent = agentCommand({ script });
    const profile = acpProfile({
      command: "/bin/sh",
      args: ["-c", 'env > "$1"; shift; exec "$@"', "sh", envFile, agent.command, ...agent.args],
      env: { AGENT_KEY: "{{ENGINE_KEY}}", ACP_DOUBLE_LOG: setup.log },
    });
    const { context } = await attemptContext({
      profile,
      workspace: setup.workspace,
      env: {
        PATH: process.env["PATH"],
        HOME: setup.dir,
        ENGINE_KEY: "k-123",
        ENGINE_SECRET: "must-not-leak",
        CHRYS_ACP_SUBAGENT_DEPTH: "2",
      },
    });
    expect((await run(context)).status).toBe("completed");
    const childEnv = Object.fromEntries(
      readFileSync(envFile, "utf8")
        .split("\n")
        .filter((l) => l.includes("="))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(childEnv).toMatchObject({
      PATH: process.env["PATH"],
      HOME: setup.dir,
      AGENT_KEY: "k-123",
      CHRYS_ACP_SUBAGENT_DEPTH: "3",
    });
    expect(childEnv).not.toHaveProperty("ENGINE_SECRET");
    expect(childEnv).not.toHaveProperty("ENGINE_KEY");
  });

  it("keeps only the end of a long stderr, marked truncated", async () => {
    const setup = doubleSetup({
      turns: [
        { steps: [{ stderr: `${"x".repeat(5000)}\n` }, { stderr: "the last words\n" }, { message: "ok" }] },
      ],
    });
    const small = createAcpAttempt({ graceMs: 500, stderrLimitBytes: 1024 });
    const { context, transcripts } = await attemptContext(setup);
    expect((await small(context)).status).toBe("completed");
    const stderr = transcripts[0]!.stderr!;
    expect(stderr.truncated).toBe(true);
    expect(Buffer.byteLength(stderr.text)).toBeLessThanOrEqual(1024);
    expect(stderr.text.endsWith("the last words\n")).toBe(true);
  });

  it("hands the engine's MCP servers to the session, which the agent can call", async () => {
    const mcpLog = join(doubleSetup({ turns: [{ steps: [{ empty: true }] }] }).dir, "mcp.jsonl");
    const server = await startMcpHttpServer({ tools: ["echo"], log: mcpLog });
    try {
      const setup = doubleSetup({
        turns: [
          { steps: [{ mcpCall: { server: "engine", tool: "echo", arguments: { text: "handed off" } } }] },
        ],
      });
      const withServers = createAcpAttempt({
        graceMs: 500,
        mcpServers: () => [{ type: "http", name: "engine", url: server.url }],
      });
      const { context, io } = await attemptContext(setup);
      const result = await withServers(context);
      expect(result).toEqual({ status: "completed", value: { text: "handed off", data: null } });
      expect(io.of("tool_call").map((a) => a.status)).toEqual(["in_progress", "completed"]);
      expect(readMcpCallLog(mcpLog)).toMatchObject([{ tool: "echo", arguments: { text: "handed off" } }]);
      const created = setup.entries().find((e) => e.event === "request" && e.method === "session/new");
      expect(created).toMatchObject({ mcpServers: [{ name: "engine", type: "http", url: server.url }] });
    } finally {
      await server.close();
    }
  });
});
