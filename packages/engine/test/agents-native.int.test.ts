import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type ProviderDouble, startProviderDouble, text, toolCalls } from "@icode/model-provider-double";
import { tmpDir, writeTree } from "@icode/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, type EngineEvent } from "../src/index";

const WORKFLOW = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Native review")


def prepare(value: WorkflowValue) -> WorkflowValue:
    return WorkflowValue(text="Please review: " + value.text, data={"ignored": True})


def report(value: WorkflowValue) -> str:
    return "REPORT: " + value.text


p = wf.python("prepare", prepare)
r = wf.agent("review", profile="Reviewer", instructions_suffix="Answer in one line.")
f = wf.python("report", report)
wf.chain(p, r, f)
wf.start(p)
wf.output(f)
workflow = wf.build()
`;

let provider: ProviderDouble;
beforeEach(async () => {
  provider = await startProviderDouble();
});
afterEach(async () => {
  await provider.close();
});

function project(model: { provider: string; stream: boolean }) {
  const cwd = tmpDir();
  const base = model.provider === "anthropic" ? provider.anthropicBaseUrl : provider.openaiBaseUrl;
  writeTree(cwd, {
    ".chrys/workflows/review.py": WORKFLOW,
    ".chrys/agents/reviewer.yaml": [
      "name: Reviewer",
      "instructions: You review changes.",
      "tools:",
      "  builtins: [filesystem.read]",
      "approval:",
      "  default: auto",
      "",
    ].join("\n"),
    "notes.txt": "the notes file\n",
    ".home/models/aaaaaaaaaaaa.yaml": [
      "id: aaaaaaaaaaaa",
      "name: Double",
      `provider: ${model.provider}`,
      "model_id: reviewer-model",
      `base_url: ${base}`,
      'api_key: "{{DOUBLE_KEY}}"',
      `stream: ${model.stream}`,
      "",
    ].join("\n"),
    ".home/settings.yaml": "model:\n  profile:\n    active: Double\n",
  });
  const env = { ...process.env, CHRYS_HOME: join(cwd, ".home"), DOUBLE_KEY: "sk-test" };
  return { cwd, engine: createEngine({ cwd, env, homeDir: join(cwd, "home") }) };
}

describe("native agent nodes through the engine, against a loopback provider", () => {
  for (const model of [
    { provider: "openai", stream: false },
    { provider: "openai", stream: true },
    { provider: "anthropic", stream: true },
  ]) {
    it(`runs the agent between Python nodes (${model.provider}, ${model.stream ? "streaming" : "plain"}): upstream text in, reply text out, tools, usage, transcript`, async () => {
      const { engine } = project(model);
      provider.script("reviewer-model", [
        toolCalls([{ name: "read_file", arguments: { path: "notes.txt" } }], { text: "Reading notes." }),
        text("Looks good.", { usage: { inputTokens: 50, outputTokens: 4 } }),
      ]);
      const run = engine.run({ workflowId: "review", input: "a patch", trust: true });
      const activities: EngineEvent[] = [];
      run.events.on("agent_activity", (e) => activities.push(e));
      const report = await run.result;
      expect(report).toMatchObject({
        status: "finished",
        outcome: "completed",
        outputs: [{ text: "REPORT: Looks good." }],
      });
      const [first, second] = provider.requestsFor("reviewer-model");
      const sent = JSON.stringify(first!.body);
      expect(sent).toContain("Please review: a patch");
      expect(sent).toContain("You review changes.");
      expect(sent).toContain("Answer in one line.");
      expect(sent).not.toContain("ignored");
      expect(first!.headers.authorization ?? first!.headers["x-api-key"]).toContain("sk-test");
      expect(JSON.stringify(second!.body)).toContain("the notes file");
      const calls = activities.flatMap((e) =>
        e.type === "agent_activity" && e.activity.kind === "tool_call" ? [e.activity] : [],
      );
      expect(calls.at(-1)).toMatchObject({
        title: expect.stringContaining("read_file"),
        status: "completed",
      });
      expect(activities.some((e) => e.type === "agent_activity" && e.activity.kind === "usage")).toBe(true);
      if (report.status !== "finished") return;
      const file = readdirSync(join(report.location!, "nodes")).find((n) => n.includes(".transcript."));
      const saved = JSON.parse(readFileSync(join(report.location!, "nodes", file!), "utf8"));
      expect(saved.transcript).toMatchObject({
        runtime: "native",
        profile: "Reviewer",
        model: "aaaaaaaaaaaa",
      });
      await engine.close();
    });
  }

  it("a quota error is not retried; the run fails with the class and the provider's message", async () => {
    const { engine } = project({ provider: "openai", stream: false });
    const { quotaExhausted } = await import("@icode/model-provider-double");
    provider.script("reviewer-model", [quotaExhausted()]);
    const report = await engine.run({ workflowId: "review", trust: true }).result;
    expect(report).toMatchObject({
      outcome: "node_failed",
      node_id: "review",
      error_class: "model_quota_exhausted",
    });
    expect(provider.requestsFor("reviewer-model")).toHaveLength(1);
    await engine.close();
  });
});
