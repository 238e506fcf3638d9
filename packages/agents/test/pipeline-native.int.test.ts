import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  finalJson,
  hang,
  invalidKey,
  type ProviderDouble,
  type RecordedRequest,
  reportBlocked,
  startProviderDouble,
  submitHandoff,
  text,
  toolCalls,
  toolResults,
} from "@icode/model-provider-double";
import type { NodeOutcome } from "@icode/pipelines";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createPipelineNodeExecutor } from "../src/pipeline";
import type { AgentTool, ToolsetOptions } from "../src/tool";
import { AgentTranscriptSchema } from "../src/transcript";
import { modelYaml, noWait, profileYaml, setup, type TestWire, toolsetOf, WIRES } from "./native-harness";
import { nodeRequest } from "./support/pipeline";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());
beforeEach(() => provider.reset());
const executors: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(executors.splice(0).map((e) => e.close()));
});

function userTexts(request: RecordedRequest): string[] {
  return request.prompt.items
    .filter((i): i is Extract<typeof i, { type: "message" }> => i.type === "message" && i.role === "user")
    .map((i) => i.text);
}

function expectStatus<S extends NodeOutcome["status"]>(
  outcome: NodeOutcome,
  status: S,
): Extract<NodeOutcome, { status: S }> {
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${JSON.stringify(outcome)}`);
  return outcome as Extract<NodeOutcome, { status: S }>;
}

let counter = 0;
async function env(wire: TestWire, model: Record<string, unknown> = {}) {
  counter += 1;
  const route = `pipeline-${wire}-${counter}`;
  const s = await setup({
    models: { m: modelYaml(provider, wire, route, model) },
    agents: { Tester: profileYaml("Tester", ["instructions: You implement things."]) },
  });
  const runDir = join(s.home, "run");
  mkdirSync(runDir, { recursive: true });
  const toolset = toolsetOf([]);
  const config = { ...s.config, defaultProfile: s.config.profiles.find((p) => p.name === "Tester") ?? null };
  const executor = createPipelineNodeExecutor({
    config,
    chrysHome: s.home,
    homeDir: s.home,
    native: { buildToolset: toolset.build, sleep: noWait },
  });
  executors.push(executor);
  const where = { runDir, launch: s.workspace, home: s.home };
  return { s, route, executor, where, requests: () => provider.requestsFor(route) };
}

describe.each(WIRES)("a pipeline node on the native loop (%s wire)", (wire) => {
  it("succeeds with the handoff submitted through the built-in submit_handoff tool", async () => {
    const e = await env(wire);
    provider.script(e.route, [
      submitHandoff(
        { summary: "implemented", artifacts: ["src/a.ts"] },
        { usage: { inputTokens: 20, outputTokens: 4 } },
      ),
      text("Handed off.", { usage: { inputTokens: 30, outputTokens: 2 } }),
    ]);
    const { request, events } = nodeRequest(e.where, { id: "impl", model: "m" });
    const outcome = expectStatus(
      await e.executor.runNode(request, new AbortController().signal),
      "succeeded",
    );
    expect(outcome.handoff).toEqual({ summary: "implemented", artifacts: ["src/a.ts"] });
    expect(outcome.session_ref).toMatch(/^native:run-1\/impl#1\./);
    expect(outcome.usage).toMatchObject({ input_tokens: 50, output_tokens: 6, total_tokens: 56 });
    expect(events[0]).toEqual({ type: "running", session_ref: outcome.session_ref });
    const [first] = e.requests();
    expect(first!.prompt.tools).toEqual(["submit_handoff", "report_blocked"]);
    expect(userTexts(first!)[0]).toContain("Task of impl.");
    const transcript = AgentTranscriptSchema.parse(
      JSON.parse(readFileSync(join(e.where.runDir, outcome.transcript!), "utf8")),
    );
    expect(transcript).toMatchObject({
      runtime: "native",
      node_id: "impl",
      model: "m",
      outcome: "succeeded",
    });
  });

  it("corrects a wrong handoff in the same conversation, then blocks after two rounds", async () => {
    const e = await env(wire);
    provider.script(e.route, [
      submitHandoff({ summary: 1 }),
      text("ok"),
      submitHandoff({ summary: "right" }),
      text("ok"),
    ]);
    const good = nodeRequest(e.where, { id: "fix", model: "m" });
    const fixed = expectStatus(
      await e.executor.runNode(good.request, new AbortController().signal),
      "succeeded",
    );
    expect(fixed.handoff).toEqual({ summary: "right" });
    expect(fixed.corrections).toBe(1);
    expect(good.events.filter((x) => x.type === "correction")).toEqual([
      { type: "correction", round: 1, problems: ["$.summary: expected string, got number"] },
    ]);
    const third = e.requests()[2]!;
    // The same conversation: the first prompt, the tool call and its result, then the correction.
    expect(userTexts(third)).toHaveLength(2);
    expect(userTexts(third)[1]).toContain("$.summary: expected string, got number");
    expect(toolResults(third)).toHaveLength(1);

    provider.reset();
    provider.script(e.route, [finalJson({ nope: true }), finalJson({ nope: 2 }), finalJson({ nope: 3 })]);
    const bad = nodeRequest(e.where, { id: "stuck", model: "m" });
    const stuck = expectStatus(
      await e.executor.runNode(bad.request, new AbortController().signal),
      "blocked",
    );
    expect(stuck.corrections).toBe(2);
    expect(stuck.reason).toContain('$: missing required field "summary"');
    expect(e.requests()).toHaveLength(3);
  });

  it("takes the final message's JSON, and report_blocked blocks", async () => {
    const e = await env(wire);
    provider.script(e.route, [finalJson({ summary: "in text" })]);
    const a = nodeRequest(e.where, { id: "a", model: "m" });
    const ok = expectStatus(await e.executor.runNode(a.request, new AbortController().signal), "succeeded");
    expect(ok.handoff).toEqual({ summary: "in text" });

    provider.script(e.route, [reportBlocked("the spec contradicts itself"), text("stopping")]);
    const b = nodeRequest(e.where, { id: "b", model: "m" });
    const blocked = expectStatus(
      await e.executor.runNode(b.request, new AbortController().signal),
      "blocked",
    );
    expect(blocked.reason).toBe("the spec contradicts itself");
  });

  it("continues the conversation for reuse_session_of", async () => {
    const e = await env(wire);
    provider.script(e.route, [finalJson({ summary: "planned" }), finalJson({ summary: "built" })]);
    const plan = nodeRequest(e.where, { id: "plan", model: "m" });
    const planned = expectStatus(
      await e.executor.runNode(plan.request, new AbortController().signal),
      "succeeded",
    );
    const build = nodeRequest(
      e.where,
      { id: "build", model: "m", depends_on: ["plan"], reuse_session_of: "plan" },
      { reuseSession: planned.session_ref },
    );
    const built = expectStatus(
      await e.executor.runNode(build.request, new AbortController().signal),
      "succeeded",
    );
    expect(built.session_ref).toBe(planned.session_ref);
    const second = e.requests()[1]!;
    expect(userTexts(second).map((t) => t.split("\n")[0])).toEqual(["Task of plan.", "Task of build."]);
    await e.executor.stopSessions("run-1");
    const again = nodeRequest(e.where, { id: "again", model: "m" }, { reuseSession: planned.session_ref });
    const gone = expectStatus(
      await e.executor.runNode(again.request, new AbortController().signal),
      "failed",
    );
    expect(gone.error.code).toBe("pipeline_node_session_unavailable");
  });

  it("aborts the loop when the signal aborts: canceled", async () => {
    const e = await env(wire);
    provider.script(e.route, [hang()]);
    const controller = new AbortController();
    const { request } = nodeRequest(
      e.where,
      { id: "slow", model: "m" },
      {
        onEvent: (x) => {
          if (x.type === "running") setTimeout(() => controller.abort("user_cancelled"), 100);
        },
      },
    );
    const outcome = await e.executor.runNode(request, controller.signal);
    expect(outcome.status).toBe("canceled");
    expect(outcome.session_ref).toBeNull();
  });

  it("maps effort onto the provider's reasoning options", async () => {
    const e = await env(wire, { max_output_tokens: 20000 });
    provider.script(e.route, [finalJson({ summary: "x" })]);
    const { request } = nodeRequest(e.where, { id: "think", model: "m", effort: "medium" });
    expectStatus(await e.executor.runNode(request, new AbortController().signal), "succeeded");
    const body = e.requests()[0]!.body as Record<string, unknown>;
    if (wire === "openai") expect(body["reasoning_effort"]).toBe("medium");
    else expect(body["thinking"]).toEqual({ type: "enabled", budget_tokens: 4096 });
  });
});

describe("sub-agents of a native pipeline node", () => {
  it("run as in workflow agent nodes: the helper's answer is the tool's result", async () => {
    counter += 1;
    const route = `pipeline-sub-${counter}`;
    const s = await setup({
      models: { m: modelYaml(provider, "openai", route) },
      agents: {
        Tester: profileYaml("Tester", ["sub_agents: {agents: [{profile: Helper, tool_name: helper}]}"]),
        Helper: profileYaml("Helper", ["instructions: You help."]),
      },
    });
    const helper = s.config.profiles.find((p) => p.name === "Helper")!;
    let parent: ToolsetOptions | null = null;
    const call: AgentTool = {
      name: "helper",
      kind: "sub_agent",
      description: "Helper",
      inputSchema: { type: "object", properties: {} },
      activityKind: "sub_agent",
      title: () => "helper",
      execute: (_input, context) => parent!.runSubAgent(helper, "look it up", context.signal),
    };
    const runDir = join(s.home, "run");
    mkdirSync(runDir, { recursive: true });
    const config = {
      ...s.config,
      defaultProfile: s.config.profiles.find((p) => p.name === "Tester") ?? null,
    };
    const executor = createPipelineNodeExecutor({
      config,
      chrysHome: s.home,
      homeDir: s.home,
      native: {
        sleep: noWait,
        buildToolset: async (options) => {
          if (options.profile.name === "Tester") parent = options;
          return {
            tools: options.profile.name === "Tester" ? [call] : [],
            instructions: [],
            warnings: [],
            close: async () => undefined,
          };
        },
      },
    });
    executors.push(executor);
    provider.script(route, [
      toolCalls([{ name: "helper", arguments: {} }]),
      text("from the helper"),
      submitHandoff({ summary: "used the helper" }),
      text("ok"),
    ]);
    const { request } = nodeRequest({ runDir, launch: s.workspace, home: s.home }, { id: "n", model: "m" });
    const outcome = expectStatus(await executor.runNode(request, new AbortController().signal), "succeeded");
    expect(outcome.handoff).toEqual({ summary: "used the helper" });
    const requests = provider.requestsFor(route);
    expect(requests).toHaveLength(4);
    expect(userTexts(requests[1]!)).toEqual(["look it up"]);
    expect(toolResults(requests[2]!)[0]!.content).toBe("from the helper");
  });
});

describe("pipeline node resolution failures", () => {
  it("fails pipeline_node_model_unresolved and pipeline_node_profile_unresolved without calling a model", async () => {
    const e = await env("openai");
    const m = nodeRequest(e.where, { id: "m", model: "no-such-model" });
    const noModel = expectStatus(await e.executor.runNode(m.request, new AbortController().signal), "failed");
    expect(noModel.error.code).toBe("pipeline_node_model_unresolved");
    const p = nodeRequest(e.where, { id: "p", profile_id: "Nobody", model: "m" });
    const noProfile = expectStatus(
      await e.executor.runNode(p.request, new AbortController().signal),
      "failed",
    );
    expect(noProfile.error.code).toBe("pipeline_node_profile_unresolved");
    const c = nodeRequest(e.where, { id: "c", model: "m", cwd: "missing/dir" });
    const noCwd = expectStatus(await e.executor.runNode(c.request, new AbortController().signal), "failed");
    expect(noCwd.error.code).toBe("pipeline_node_cwd_invalid");
    expect(e.requests()).toHaveLength(0);
  });
});

describe("each handoff behaviour on the native loop (provider double scripts)", () => {
  // [behaviour, replies, status, corrections, model requests]
  const rows = [
    ["valid", () => [submitHandoff({ summary: "w" }), text("ok")], "succeeded", 0, 2],
    [
      "corrected",
      () => [submitHandoff({ summary: 1 }), text("ok"), submitHandoff({ summary: "w" }), text("ok")],
      "succeeded",
      1,
      4,
    ],
    [
      "never_corrected",
      () => [finalJson({ no: 1 }), finalJson({ no: 2 }), finalJson({ no: 3 })],
      "blocked",
      2,
      3,
    ],
    ["blocked", () => [reportBlocked("stuck"), text("ok")], "blocked", 0, 2],
    ["crash", () => [invalidKey()], "failed", 0, 1],
    ["final_json", () => [finalJson({ summary: "w" })], "succeeded", 0, 1],
  ] as const;
  it.each(rows)("%s", async (_name, replies, status, corrections, requests) => {
    const e = await env("openai");
    provider.script(e.route, [...replies()]);
    const { request } = nodeRequest(e.where, { id: "n", model: "m" });
    const outcome = await e.executor.runNode(request, new AbortController().signal);
    expect(outcome.status).toBe(status);
    expect(outcome.corrections).toBe(corrections);
    expect(e.requests()).toHaveLength(requests);
    if (outcome.status === "succeeded") expect(outcome.handoff).toEqual({ summary: "w" });
    if (outcome.status === "failed") expect(outcome.error.code).toBe("model_auth_failed");
  });

  it("warns pipeline_node_effort_unsupported when the model leaves no room for a thinking budget", async () => {
    const e = await env("anthropic", { max_output_tokens: 1000 });
    provider.script(e.route, [finalJson({ summary: "x" })]);
    const { request, events } = nodeRequest(e.where, { id: "t", model: "m", effort: "low" });
    expect((await e.executor.runNode(request, new AbortController().signal)).status).toBe("succeeded");
    const codes = events.flatMap((x) =>
      x.type === "activity" && x.activity.kind === "warning" ? [x.activity.code] : [],
    );
    expect(codes).toEqual(["pipeline_node_effort_unsupported"]);
    expect((e.requests()[0]!.body as Record<string, unknown>)["thinking"]).toBeUndefined();
  });
});
