/*
 * The attempt's life around the step loop, on one wire: what the toolset adds or fails with, a tool cut by
 * the abort (it runs again on the retry; the finished one does not), ACP sub-agents, the SDK's warnings.
 */
import {
  type ProviderDouble,
  startProviderDouble,
  text,
  toolCalls,
  toolResults,
} from "@icode/model-provider-double";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { createNativeRunner } from "../src/native/runner";
import type { AgentTool, ToolsetOptions } from "../src/tool";
import {
  attempt,
  modelYaml,
  noteTool,
  noWait,
  profileYaml,
  RecordingIO,
  setup,
  toolsetOf,
} from "./native-harness";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());
beforeEach(() => provider.reset());

let n = 0;
async function env(
  agents: Record<string, string> = { Tester: profileYaml("Tester", ["instructions: Base."]) },
) {
  n += 1;
  const route = `life-${n}`;
  const s = await setup({ models: { m: modelYaml(provider, "openai", route, { stream: true }) }, agents });
  return { s, route };
}

it("adds the toolset's instructions before the node's suffix and reports its warnings", async () => {
  const { s, route } = await env();
  const toolset = toolsetOf([], {
    instructions: ["Server docs: use the search tool."],
    warnings: [{ code: "mcp_connect_failed", message: "server gh could not connect" }],
  });
  const runner = createNativeRunner({ buildToolset: toolset.build, sleep: noWait });
  provider.script(route, [text("ok")]);
  const { io } = await attempt(runner, s, { model: "m", node: { instructions_suffix: "Suffix." } });
  const body = provider.requestsFor(route)[0]!.body as { messages: { role: string; content: string }[] };
  expect(body.messages[0]).toEqual({
    role: "system",
    content: "Base.\n\nServer docs: use the search tool.\n\nSuffix.",
  });
  expect(io.of("warning")).toEqual([
    { kind: "warning", code: "mcp_connect_failed", message: "server gh could not connect" },
  ]);
  expect(toolset.builds[0]).toMatchObject({ cwd: s.workspace, vision: false, profile: { name: "Tester" } });
});

it("fails agent_tools_failed, sending nothing, when the toolset cannot be built", async () => {
  const { s, route } = await env();
  const runner = createNativeRunner({
    buildToolset: async () => {
      throw new Error("MCP server gh: spawn gh-mcp ENOENT");
    },
  });
  const { result, transcripts } = await attempt(runner, s, { model: "m" });
  expect(result).toMatchObject({
    status: "failed",
    error: { class: "agent_tools_failed", retryable: false },
  });
  expect((result as { error: { message: string } }).error.message).toMatch(/ENOENT/);
  expect(provider.requestsFor(route)).toHaveLength(0);
  expect(transcripts.map((t) => t.outcome)).toEqual(["agent_tools_failed"]);
});

it("runs a tool cut short by the abort again on the retry, but not the one that finished", async () => {
  const { s, route } = await env();
  const note = noteTool();
  let waits = 0;
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const slow: AgentTool = {
    name: "slow",
    kind: "sleep",
    description: "Slow",
    inputSchema: { type: "object", properties: {} },
    activityKind: "other",
    title: () => "slow",
    execute: (_input, context) => {
      waits += 1;
      if (waits > 1) return Promise.resolve({ ok: true, output: "slow done" });
      started();
      return new Promise((resolve) =>
        context.signal.addEventListener("abort", () => resolve({ ok: false, error: "aborted" }), {
          once: true,
        }),
      );
    },
  };
  const runner = createNativeRunner({ buildToolset: toolsetOf([note.tool, slow]).build, sleep: noWait });
  provider.script(route, [
    toolCalls([
      { name: "write_note", arguments: { note: "a" } },
      { name: "slow", arguments: {} },
    ]),
    text("Both done."),
  ]);
  const io = new RecordingIO();
  const first = attempt(runner, s, { model: "m", io });
  await running;
  io.abort("timeout");
  const one = await first;
  expect(one.transcripts[0]!.tool_calls.map((c) => [c.name, c.status])).toEqual([
    ["write_note", "completed"],
    ["slow", "cancelled"],
  ]);
  const two = await attempt(runner, s, { model: "m", attempt: 2, continueFrom: 1 });
  expect(two.result).toMatchObject({ status: "completed", value: { text: "Both done." } });
  expect(note.runs).toHaveLength(1);
  expect(waits).toBe(2);
  const requests = provider.requestsFor(route);
  expect(requests).toHaveLength(2);
  expect(toolResults(requests[1]!).map((r) => r.content)).toEqual(['wrote "a"', "slow done"]);
});

it("answers an ACP sub-agent call with an error until an ACP runner is given, then with its result", async () => {
  const agents = {
    Tester: profileYaml("Tester", ["sub_agents: {agents: [{profile: Ext, tool_name: ext}]}"]),
    Ext: profileYaml("Ext", ["acp: {command: some-acp-agent}"]),
  };
  const { s, route } = await env(agents);
  const ext = s.config.profiles.find((p) => p.name === "Ext")!;
  let parent: ToolsetOptions | null = null;
  const call: AgentTool = {
    name: "ext",
    kind: "sub_agent",
    description: "External",
    inputSchema: { type: "object", properties: {} },
    activityKind: "sub_agent",
    title: () => "ext",
    execute: (_input, context) => parent!.runSubAgent(ext, "look", context.signal),
  };
  const build = async (options: ToolsetOptions) => {
    parent = options;
    return { tools: [call], instructions: [], warnings: [], close: async () => undefined };
  };
  provider.script(route, [
    toolCalls([{ name: "ext", arguments: {} }]),
    text("a"),
    toolCalls([{ name: "ext", arguments: {} }]),
    text("b"),
  ]);
  await attempt(createNativeRunner({ buildToolset: build, sleep: noWait }), s, { model: "m" });
  expect(toolResults(provider.requestsFor(route)[1]!)[0]!.content).toMatch(
    /ACP sub-agents are not available/,
  );
  const asked: string[] = [];
  const withAcp = createNativeRunner({
    buildToolset: build,
    sleep: noWait,
    runAcpSubAgent: async (profile, task) => {
      asked.push(`${profile.name}:${task}`);
      return { ok: true, output: "from acp" };
    },
  });
  await attempt(withAcp, s, { model: "m" });
  expect(asked).toEqual(["Ext:look"]);
  expect(toolResults(provider.requestsFor(route)[3]!)[0]!.content).toBe("from acp");
});

it("fails every call of a sub-agent whose concurrency is 0, and reports memory problems as warnings", async () => {
  const agents = {
    Tester: profileYaml("Tester", [
      "memory: {files: [missing.md]}",
      "sub_agents: {agents: [{profile: Helper, tool_name: helper, max_concurrency: 0}]}",
    ]),
    Helper: profileYaml("Helper"),
  };
  const { s, route } = await env(agents);
  const helper = s.config.profiles.find((p) => p.name === "Helper")!;
  let parent: ToolsetOptions | null = null;
  const call: AgentTool = {
    name: "helper",
    kind: "sub_agent",
    description: "Helper",
    inputSchema: { type: "object", properties: {} },
    activityKind: "sub_agent",
    title: () => "helper",
    execute: (_input, context) => parent!.runSubAgent(helper, "go", context.signal),
  };
  const runner = createNativeRunner({
    sleep: noWait,
    buildToolset: async (options) => {
      parent = options;
      return { tools: [call], instructions: [], warnings: [], close: async () => undefined };
    },
  });
  provider.script(route, [toolCalls([{ name: "helper", arguments: {} }]), text("gave up")]);
  const { result, io } = await attempt(runner, s, { model: "m" });
  expect(result).toMatchObject({ status: "completed", value: { text: "gave up" } });
  expect(provider.requestsFor(route)).toHaveLength(2);
  expect(toolResults(provider.requestsFor(route)[1]!)[0]!.content).toMatch(/sets its concurrency to 0/);
  expect(io.of("warning").map((w) => w.code)).toEqual(["memory_unreadable"]);
});
