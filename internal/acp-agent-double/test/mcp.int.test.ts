import { join } from "node:path";
import type { McpServer } from "@agentclientprotocol/sdk/unstable";
import { mcpStdioCommand, readMcpCallLog, startMcpHttpServer } from "@icode/mcp-server-double";
import { tmpDir, waitUntil } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { type AcpDoubleScriptInput, readAgentLog } from "../src/index";
import { type AgentUnderTest, messageText, type StartOptions, startSession } from "./support/acp-client";
import { startHandoffServer } from "./support/handoff-server";

type Closable = { close(): Promise<unknown> };
const open: Closable[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});
async function session(script: AcpDoubleScriptInput, options: StartOptions & { mcpServers: McpServer[] }) {
  const agent = await startSession(script, options);
  open.push(agent);
  return agent;
}
function stdioServer(name: string, log: string): McpServer {
  const { command, args } = mcpStdioCommand({ name });
  return { name, command, args, env: [{ name: "MCP_DOUBLE_LOG", value: log }] };
}
const toolUpdates = (agent: AgentUnderTest & { sessionId: string }) =>
  agent
    .updatesOf(agent.sessionId)
    .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");

describe("MCP calls from the agent", () => {
  it("call a tool of the stdio MCP double given in session/new and echo the result", async () => {
    const dir = tmpDir();
    const mcpLog = join(dir, "mcp.jsonl");
    const agentLog = join(dir, "agent.jsonl");
    const agent = await session(
      {
        turns: [
          { steps: [{ mcpCall: { server: "tools", tool: "echo", arguments: { text: "from the agent" } } }] },
        ],
      },
      { log: agentLog, mcpServers: [stdioServer("tools", mcpLog)] },
    );
    expect(await agent.prompt(agent.sessionId, "x")).toEqual({ stopReason: "end_turn" });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("from the agent");
    const [call, result] = toolUpdates(agent);
    expect(call).toMatchObject({
      sessionUpdate: "tool_call",
      title: "echo (tools)",
      kind: "other",
      status: "in_progress",
      rawInput: { text: "from the agent" },
    });
    expect(result).toMatchObject({
      sessionUpdate: "tool_call_update",
      toolCallId: (call as { toolCallId: string }).toolCallId,
      status: "completed",
      rawOutput: { content: [{ type: "text", text: "from the agent" }] },
    });
    const calls = readMcpCallLog(mcpLog);
    expect(calls).toEqual([expect.objectContaining({ tool: "echo", server: "tools", transport: "stdio" })]);
    expect(calls[0]?.pid).not.toBe(agent.child.pid);
    expect(readAgentLog(agentLog).filter((e) => e.event === "mcp_call")).toEqual([
      expect.objectContaining({ server: "tools", tool: "echo", isError: false }),
    ]);
  });

  it("call an HTTP MCP server, and branch on a tool error or a server that is not there", async () => {
    const http = await startMcpHttpServer({ name: "web" });
    open.push(http);
    const agent = await session(
      {
        turns: [
          {
            steps: [
              { mcpCall: { tool: "add", arguments: { a: 2, b: 3 } } },
              {
                mcpCall: { tool: "fail", arguments: { message: "boom" } },
                onError: [{ message: "|recovered|" }],
              },
              { mcpCall: { server: "gone", tool: "echo" }, onError: [{ stop: "refusal" }] },
            ],
          },
        ],
      },
      { mcpServers: [{ type: "http", name: "web", url: http.url, headers: [] }] },
    );
    expect(await agent.prompt(agent.sessionId, "x")).toEqual({ stopReason: "refusal" });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe(
      "5tool error: boom|recovered|MCP call failed: no MCP server named gone in session/new (servers: web)",
    );
    expect(
      toolUpdates(agent)
        .filter((u) => u.sessionUpdate === "tool_call_update")
        .map((u) => "status" in u && u.status),
    ).toEqual(["completed", "failed", "failed"]);
  });

  it("cancel a running MCP call with session/cancel", async () => {
    const http = await startMcpHttpServer();
    open.push(http);
    const agent = await session(
      {
        turns: [{ steps: [{ mcpCall: { tool: "slow", arguments: { ms: 600_000 } } }, { message: "never" }] }],
      },
      { mcpServers: [{ type: "http", name: "web", url: http.url, headers: [] }] },
    );
    const prompt = agent.prompt(agent.sessionId, "x");
    // The tool_call update comes right before the call goes out.
    expect(await waitUntil(() => toolUpdates(agent).length > 0, 30_000)).toBe(true);
    await agent.connection.agent.notify("session/cancel", { sessionId: agent.sessionId });
    expect(await prompt).toEqual({ stopReason: "cancelled" });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe("");
  });
});

describe("handoffs", () => {
  it("submit to whichever server offers submit_handoff, branch on its refusal, correct it next turn", async () => {
    const dir = tmpDir();
    const handoff = await startHandoffServer();
    open.push(handoff);
    const agent = await session(
      {
        turns: [
          {
            steps: [
              {
                submitHandoff: { summary: "did it" },
                onOk: [{ message: "|unexpected|" }],
                onError: [{ message: "|will fix|" }],
              },
            ],
          },
          {
            steps: [
              { submitHandoff: { status: "done", summary: "did it" }, onOk: [{ message: "|handed off|" }] },
            ],
          },
          { steps: [{ reportBlocked: { reason: "no access to the repo" } }] },
        ],
      },
      {
        mcpServers: [
          stdioServer("tools", join(dir, "mcp.jsonl")),
          { type: "http", name: "engine", url: handoff.url, headers: [] },
        ],
      },
    );
    await agent.prompt(agent.sessionId, "first");
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe(
      "tool error: invalid handoff: status is required|will fix|",
    );
    const before = agent.updatesOf(agent.sessionId).length;
    await agent.prompt(agent.sessionId, "the handoff was invalid: status is required");
    expect(messageText(agent.updatesOf(agent.sessionId).slice(before))).toBe("handoff accepted|handed off|");
    expect(handoff.handoffs).toEqual([{ status: "done", summary: "did it" }]);
    await agent.prompt(agent.sessionId, "third");
    expect(handoff.blocked).toEqual(["no access to the repo"]);
    expect(
      toolUpdates(agent)
        .filter((u) => u.sessionUpdate === "tool_call")
        .map((u) => "title" in u && u.title),
    ).toEqual(["submit_handoff", "submit_handoff", "report_blocked"]);
  });

  it("fall back to finalJson when no server offers the handoff tool", async () => {
    const agent = await session(
      {
        turns: [
          {
            steps: [
              {
                submitHandoff: { status: "done" },
                onError: [{ finalJson: { status: "done", via: "message" } }],
              },
              { message: "never" },
            ],
          },
        ],
      },
      { mcpServers: [] },
    );
    expect(await agent.prompt(agent.sessionId, "x")).toEqual({ stopReason: "end_turn" });
    expect(messageText(agent.updatesOf(agent.sessionId))).toBe(
      'MCP call failed: no MCP server of session/new offers submit_handoff (servers: none were given){"status":"done","via":"message"}',
    );
  });
});
