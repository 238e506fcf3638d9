import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { type AcpDoubleScriptInput, readAgentLog } from "../src/index";
import { type AgentUnderTest, messageText, rpcError, startAgent } from "./support/acp-client";

const running: AgentUnderTest[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((a) => a.close()));
});
async function ready(script: AcpDoubleScriptInput, log?: string) {
  const agent = await startAgent(script, log ? { log } : {});
  running.push(agent);
  await agent.initialize();
  return agent;
}
const ECHO_SESSION = { turns: [{ steps: [{ echoSession: true as const }] }] };

async function echoedSession(agent: AgentUnderTest, sessionId: string) {
  const before = agent.updatesOf(sessionId).length;
  await agent.prompt(sessionId, "where am I?");
  return JSON.parse(messageText(agent.updatesOf(sessionId).slice(before))) as Record<string, unknown>;
}

describe("session/new", () => {
  it("records cwd and MCP servers, and answers modes and config options", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await ready(
      {
        ...ECHO_SESSION,
        modes: {
          available: [
            { id: "ask", name: "Ask" },
            { id: "code", name: "Code" },
          ],
          reject: ["code"],
        },
        configOptions: [
          {
            id: "effort",
            name: "Effort",
            category: "thought_level",
            currentValue: "low",
            options: [
              { value: "low", name: "Low" },
              { value: "high", name: "High" },
            ],
          },
          {
            id: "locked",
            name: "Locked",
            currentValue: "a",
            options: [
              { value: "a", name: "A" },
              { value: "b", name: "B" },
            ],
            reject: true,
          },
        ],
      },
      log,
    );
    const cwd = tmpDir();
    const mcpServers = [
      { name: "tools", command: "/bin/true", args: ["--x"], env: [{ name: "K", value: "V" }] },
      { type: "http" as const, name: "web", url: "http://127.0.0.1:9/mcp", headers: [] },
    ];
    const created = await agent.newSession({ cwd, mcpServers });
    expect(created.sessionId).toMatch(/^sess_\d+_/);
    expect(created.modes).toEqual({
      currentModeId: "ask",
      availableModes: [
        { id: "ask", name: "Ask" },
        { id: "code", name: "Code" },
      ],
    });
    expect(created.configOptions?.map((o) => [o.id, o.type === "select" && o.currentValue])).toEqual([
      ["effort", "low"],
      ["locked", "a"],
    ]);
    expect(readAgentLog(log).find((e) => e.event === "request" && e.method === "session/new")).toMatchObject({
      cwd,
      mcpServers: [
        { name: "tools", type: "stdio", command: "/bin/true", args: ["--x"] },
        { name: "web", type: "http", url: "http://127.0.0.1:9/mcp" },
      ],
    });
    const id = created.sessionId;
    const request = agent.connection.agent;

    expect(await request.request("session/set_mode", { sessionId: id, modeId: "ask" })).toEqual({});
    expect(await rpcError(request.request("session/set_mode", { sessionId: id, modeId: "code" }))).toEqual({
      code: -32602,
      message: expect.stringContaining("the script refuses mode code"),
    });
    expect(
      await rpcError(request.request("session/set_mode", { sessionId: id, modeId: "yolo" })),
    ).toMatchObject({
      code: -32602,
    });

    const set = await request.request("session/set_config_option", {
      sessionId: id,
      configId: "effort",
      value: "high",
    });
    expect(set.configOptions.find((o) => o.id === "effort")).toMatchObject({ currentValue: "high" });
    expect(
      await rpcError(
        request.request("session/set_config_option", { sessionId: id, configId: "effort", value: "max" }),
      ),
    ).toMatchObject({ code: -32602, message: expect.stringContaining("values: low, high") });
    expect(
      await rpcError(
        request.request("session/set_config_option", { sessionId: id, configId: "locked", value: "b" }),
      ),
    ).toMatchObject({
      code: -32602,
      message: expect.stringContaining("refuses any change of config option locked"),
    });
    expect(
      await rpcError(
        request.request("session/set_config_option", { sessionId: id, configId: "nope", value: "b" }),
      ),
    ).toMatchObject({ code: -32602 });

    expect(await echoedSession(agent, id)).toEqual({
      sessionId: id,
      cwd,
      mcpServers: ["tools", "web"],
      modeId: "ask",
      modelId: null,
      config: { effort: "high", locked: "a" },
    });
    expect(
      await rpcError(request.request("session/set_mode", { sessionId: "other", modeId: "ask" })),
    ).toMatchObject({
      code: -32002,
    });
  });
});

describe("model switching", () => {
  const MODELS = ["fast-1", { id: "smart-2", name: "Smart" }];

  it("(a) as a config option of category model: known ids switch, unknown ones are invalid params", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await ready({ ...ECHO_SESSION, models: { via: "config_option", available: MODELS } }, log);
    const { sessionId, configOptions } = await agent.newSession();
    expect(configOptions).toEqual([
      {
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: "fast-1",
        options: [
          { value: "fast-1", name: "fast-1" },
          { value: "smart-2", name: "Smart" },
        ],
      },
    ]);
    const request = agent.connection.agent;
    const set = await request.request("session/set_config_option", {
      sessionId,
      configId: "model",
      value: "smart-2",
    });
    expect(set.configOptions[0]).toMatchObject({ currentValue: "smart-2" });
    expect(
      await rpcError(
        request.request("session/set_config_option", { sessionId, configId: "model", value: "gpt-9" }),
      ),
    ).toMatchObject({
      code: -32602,
      message: expect.stringContaining("gpt-9 is not a value of config option model"),
    });
    expect(
      await rpcError(request.request("session/set_model", { sessionId, modelId: "fast-1" })),
    ).toMatchObject({
      code: -32601,
    });
    expect((await echoedSession(agent, sessionId)).modelId).toBe("smart-2");
    const stop = readAgentLog(log).find((e) => e.event === "stop");
    expect(stop).toMatchObject({ modelId: "smart-2" });
    expect(
      readAgentLog(log)
        .filter((e) => e.event === "request" && e.method === "session/set_config_option")
        .map((e) => e.event === "request" && e.value),
    ).toEqual(["smart-2", "gpt-9"]);
  });

  it("(b) with the legacy session/set_model, accepted for known ids", async () => {
    const agent = await ready({
      ...ECHO_SESSION,
      models: { via: "set_model", available: MODELS, current: "smart-2" },
    });
    const created = (await agent.newSession()) as {
      sessionId: string;
      models?: unknown;
      configOptions?: unknown;
    };
    expect(created.models).toEqual({
      currentModelId: "smart-2",
      availableModels: [
        { modelId: "fast-1", name: "fast-1" },
        { modelId: "smart-2", name: "Smart" },
      ],
    });
    expect(created.configOptions).toBeUndefined();
    const request = agent.connection.agent;
    const sessionId = created.sessionId;
    expect(await request.request("session/set_model", { sessionId, modelId: "fast-1" })).toEqual({});
    expect(
      await rpcError(request.request("session/set_model", { sessionId, modelId: "gpt-9" })),
    ).toMatchObject({
      code: -32602,
      message: expect.stringContaining("unknown model gpt-9"),
    });
    expect(
      await rpcError(
        request.request("session/set_config_option", { sessionId, configId: "model", value: "x" }),
      ),
    ).toMatchObject({ code: -32601 });
    expect((await echoedSession(agent, sessionId)).modelId).toBe("fast-1");
  });

  it("(b) with the legacy session/set_model, rejected", async () => {
    const agent = await ready({
      ...ECHO_SESSION,
      models: { via: "set_model", available: MODELS, rejectSetModel: true },
    });
    const { sessionId } = await agent.newSession();
    expect(
      await rpcError(agent.connection.agent.request("session/set_model", { sessionId, modelId: "fast-1" })),
    ).toEqual({
      code: -32602,
      message: expect.stringContaining("the script refuses session/set_model"),
    });
    expect((await echoedSession(agent, sessionId)).modelId).toBe("fast-1");
  });

  it("(c) not at all: both methods are not found", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await ready({ ...ECHO_SESSION, models: { via: "none", available: ["only"] } }, log);
    const created = await agent.newSession();
    expect(created.configOptions).toBeUndefined();
    const request = agent.connection.agent;
    const sessionId = created.sessionId;
    expect(
      await rpcError(request.request("session/set_model", { sessionId, modelId: "only" })),
    ).toMatchObject({
      code: -32601,
    });
    expect(
      await rpcError(
        request.request("session/set_config_option", { sessionId, configId: "model", value: "only" }),
      ),
    ).toMatchObject({ code: -32601 });
    const methods = readAgentLog(log).flatMap((e) => (e.event === "request" ? [e.method] : []));
    expect(methods).toEqual(["initialize", "session/new", "session/set_model", "session/set_config_option"]);
  });
});

describe("several prompts on one session", () => {
  it("consume the ordered turns, then repeat the last; a when turn is picked by the prompt", async () => {
    const log = join(tmpDir(), "agent.jsonl");
    const agent = await ready(
      {
        turns: [
          { steps: [{ message: "one" }] },
          { when: { promptIncludes: "REVIEW" }, steps: [{ message: "reviewed" }] },
          { steps: [{ message: "two" }] },
        ],
      },
      log,
    );
    const { sessionId } = await agent.newSession();
    const texts: string[] = [];
    for (const prompt of ["a", "REVIEW this", "b", "c"]) {
      const before = agent.updatesOf(sessionId).length;
      await agent.prompt(sessionId, prompt);
      texts.push(messageText(agent.updatesOf(sessionId).slice(before)));
    }
    expect(texts).toEqual(["one", "reviewed", "two", "two"]);
    const stops = readAgentLog(log).filter((e) => e.event === "stop");
    expect(stops.map((e) => e.event === "stop" && e.turn)).toEqual([0, 1, 2, 3]);
    expect(new Set(stops.map((e) => e.event === "stop" && e.sessionId))).toEqual(new Set([sessionId]));
  });

  it("count turns per session: a second session starts from the first turn", async () => {
    const agent = await ready({
      turns: [{ steps: [{ message: "one" }] }],
      defaultTurn: { steps: [{ message: "later" }] },
    });
    const a = (await agent.newSession()).sessionId;
    const b = (await agent.newSession()).sessionId;
    await agent.prompt(a, "x");
    await agent.prompt(a, "x");
    await agent.prompt(b, "x");
    expect(messageText(agent.updatesOf(a))).toBe("onelater");
    expect(messageText(agent.updatesOf(b))).toBe("one");
  });

  it("refuse a second prompt while one runs on the session", async () => {
    const agent = await ready({ turns: [{ steps: [{ hang: true }] }] });
    const { sessionId } = await agent.newSession();
    const first = agent.prompt(sessionId, "x");
    first.catch(() => {});
    expect(await rpcError(agent.prompt(sessionId, "y"))).toMatchObject({ code: -32600 });
    await agent.connection.agent.notify("session/cancel", { sessionId });
    expect(await first).toEqual({ stopReason: "cancelled" });
  });
});

describe("session/load", () => {
  it("replays a known session and continues its turns", async () => {
    const agent = await ready({ turns: [{ steps: [{ message: "one" }] }, { steps: [{ message: "two" }] }] });
    const { sessionId } = await agent.newSession();
    await agent.prompt(sessionId, "first prompt");
    const seen = agent.updatesOf(sessionId).length;
    const loaded = await agent.connection.agent.request("session/load", {
      sessionId,
      cwd: agent.dir,
      mcpServers: [],
    });
    expect(loaded).toEqual({});
    const replay = agent.updatesOf(sessionId).slice(seen);
    expect(replay.map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "agent_message_chunk"]);
    expect(replay[0]).toMatchObject({ content: { type: "text", text: "first prompt" } });
    const before = agent.updatesOf(sessionId).length;
    await agent.prompt(sessionId, "second");
    expect(messageText(agent.updatesOf(sessionId).slice(before))).toBe("two");
  });

  it("refuses an unknown session unless loadSession is any, and is not offered when off", async () => {
    const known = await ready({ turns: [{ steps: [{ message: "ok" }] }] });
    const params = { sessionId: "sess_from_before", cwd: known.dir, mcpServers: [] };
    expect(await rpcError(known.connection.agent.request("session/load", params))).toMatchObject({
      code: -32002,
    });

    const any = await ready({ loadSession: "any", turns: [{ steps: [{ message: "ok" }] }] });
    expect(await any.connection.agent.request("session/load", params)).toEqual({});
    await any.prompt("sess_from_before", "x");
    expect(messageText(any.updatesOf("sess_from_before"))).toBe("ok");

    const off = await ready({ loadSession: "off", turns: [{ steps: [{ message: "ok" }] }] });
    expect(await rpcError(off.connection.agent.request("session/load", params))).toMatchObject({
      code: -32601,
    });
  });
});

describe("echoTurn", () => {
  it("echoes the session's id and the per-session prompt counter", async () => {
    const agent = await ready({ turns: [{ steps: [{ echoTurn: true }] }] });
    const a = (await agent.newSession()).sessionId;
    const b = (await agent.newSession()).sessionId;
    const echo = async (sessionId: string) => {
      const before = agent.updatesOf(sessionId).length;
      await agent.prompt(sessionId, "count");
      return JSON.parse(messageText(agent.updatesOf(sessionId).slice(before))) as unknown;
    };
    expect(await echo(a)).toEqual({ sessionId: a, turn: 0 });
    expect(await echo(a)).toEqual({ sessionId: a, turn: 1 });
    expect(await echo(b)).toEqual({ sessionId: b, turn: 0 });
  });
});
