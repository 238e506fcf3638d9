import { join } from "node:path";
import { tmpDir, waitUntil } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { readAgentLog } from "../src/index";
import { type AgentUnderTest, messageText, rpcError, startAgent } from "./support/acp-client";

const OK = { turns: [{ steps: [{ message: "ok" }] }] };
const running: AgentUnderTest[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.close()));
});
async function start(...args: Parameters<typeof startAgent>) {
  const agent = await startAgent(...args);
  running.push(agent);
  return agent;
}

describe("the handshake", () => {
  it("answers initialize with the protocol version, capabilities and agent info", async () => {
    const agent = await start(OK);
    expect(await agent.initialize()).toEqual({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
      },
      agentInfo: { name: "acp-agent-double", version: "0.1.0" },
    });
  });

  it("answers what the script says: protocol version, capabilities, no session/load", async () => {
    const agent = await start({
      ...OK,
      protocolVersion: 7,
      loadSession: "off",
      promptCapabilities: { image: true },
      mcpCapabilities: { sse: false },
      agentInfo: { name: "fake-claude", version: "9.9.9" },
    });
    expect(await agent.initialize()).toMatchObject({
      protocolVersion: 7,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: false },
      },
      agentInfo: { name: "fake-claude", version: "9.9.9" },
    });
  });

  it("requires authenticate with an offered method before session/new", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await start({ ...OK, auth: { methods: [{ id: "api-key", name: "API key" }] } }, { log });
    expect((await agent.initialize()).authMethods).toEqual([{ id: "api-key", name: "API key" }]);
    expect(await rpcError(agent.newSession())).toMatchObject({ code: -32000 });
    expect(await rpcError(agent.connection.agent.request("authenticate", { methodId: "oauth" }))).toEqual({
      code: -32602,
      message: expect.stringContaining("unknown auth method oauth; offered: api-key"),
    });
    expect(await agent.connection.agent.request("authenticate", { methodId: "api-key" })).toEqual({});
    const { sessionId } = await agent.newSession();
    expect(messageText(await promptUpdates(agent, sessionId))).toBe("ok");
    const requests = readAgentLog(log).filter((e) => e.event === "request" && e.method === "authenticate");
    expect(requests.map((e) => e.event === "request" && e.methodId)).toEqual(["oauth", "api-key"]);
    expect(
      readAgentLog(log)
        .filter((e) => e.event === "error")
        .map((e) => e.event === "error" && e.method),
    ).toEqual(["session/new", "authenticate"]);
  });

  it("delays its handshake answers by handshakeDelayMs", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await start({ ...OK, handshakeDelayMs: 600_000 }, { log });
    let answered = false;
    const pending = agent.initialize().then(() => {
      answered = true;
    });
    pending.catch(() => {}); // rejected when the test closes the connection
    expect(await waitUntil(() => readAgentLog(log).some((e) => e.event === "request"), 30_000)).toBe(true);
    // The SDK refuses other requests until initialize was answered: the answer is still being held back.
    expect(await rpcError(agent.newSession())).toMatchObject({
      code: -32600,
      message: expect.stringContaining("initialized"),
    });
    expect(answered).toBe(false);
  });
});

async function promptUpdates(agent: AgentUnderTest, sessionId: string) {
  await agent.prompt(sessionId, "hi");
  return agent.updatesOf(sessionId);
}
