import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { agentCommand, finishedTurns, readAgentLog, writeAgentScript } from "@icode/acp-agent-double";
import { tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine, type EngineEvent } from "../src/index";

/** A project whose `Ext` profile is the scripted ACP agent, with the given script. */
function project(workflow: string, script: Parameters<typeof writeAgentScript>[1]) {
  const cwd = tmpDir();
  const scriptFile = writeAgentScript(join(cwd, "agent.json"), script);
  const log = join(cwd, "agent.jsonl");
  const { command, args } = agentCommand({ script: scriptFile });
  const profile = [
    "name: Ext",
    "acp:",
    `  command: ${JSON.stringify(command)}`,
    `  args: ${JSON.stringify(args)}`,
    "  env:",
    `    ACP_DOUBLE_LOG: ${JSON.stringify(log)}`,
    "  result_mode: last_segment",
  ].join("\n");
  writeTree(cwd, { ".chrys/workflows/wf.py": workflow, ".chrys/agents/ext.yaml": `${profile}\n` });
  const env = { ...process.env, CHRYS_HOME: join(cwd, ".home") };
  return { cwd, log, engine: createEngine({ cwd, env, homeDir: join(cwd, "home") }) };
}

const BETWEEN = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Review between Python nodes")


def prepare(value: WorkflowValue) -> str:
    return "Review: " + value.text


def report(value: WorkflowValue) -> str:
    return "REPORT " + value.text


p = wf.python("prepare", prepare)
r = wf.agent("review", profile="Ext", instructions_suffix="Be brief.")
f = wf.python("report", report)
wf.chain(p, r, f)
wf.start(p)
wf.output(f)
workflow = wf.build()
`;

describe("agent nodes on an external ACP agent, through the engine", () => {
  it("runs the agent between Python nodes: its last segment flows on, activities and the transcript are recorded", async () => {
    const { engine, log } = project(BETWEEN, {
      turns: [
        {
          steps: [
            { message: "Looking." },
            { toolCall: { title: "read diff", kind: "read", status: "completed" } },
            { echoPrompt: true },
            { usage: { inputTokens: 12, outputTokens: 3 } },
          ],
        },
      ],
    });
    const run = engine.run({ workflowId: "wf", input: "the patch", trust: true });
    const activities: EngineEvent[] = [];
    run.events.on("agent_activity", (e) => activities.push(e));
    const report = await run.result;
    expect(report).toMatchObject({ status: "finished", outcome: "completed" });
    if (report.status !== "finished") return;
    // The node input plus instructions_suffix reached the agent; its last segment is the node's output.
    expect(report.outputs[0]!.text).toMatch(/^REPORT .*Review: the patch/s);
    expect(report.outputs[0]!.text).toContain("Be brief.");
    const kinds = activities.map((e) => (e.type === "agent_activity" ? e.activity.kind : ""));
    expect(kinds).toContain("text");
    expect(kinds).toContain("tool_call");
    expect(kinds).toContain("usage");
    const nodes = readdirSync(join(report.location!, "nodes"));
    const transcript = nodes.find((n) => n.includes(".transcript."));
    expect(transcript).toBeDefined();
    const saved = JSON.parse(readFileSync(join(report.location!, "nodes", transcript!), "utf8"));
    expect(saved).toMatchObject({
      node_id: "review",
      attempt: 1,
      transcript: { runtime: "acp", profile: "Ext" },
    });
    expect(finishedTurns(readAgentLog(log))).toHaveLength(1);
    await engine.close();
  });

  it("runs eight agent nodes in parallel with never more than four attempts in flight", async () => {
    const eight = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Eight")


def fan(value: WorkflowValue) -> str:
    return value.text


def gather(value: WorkflowValue) -> str:
    return value.text


s = wf.python("start", fan)
agents = [wf.agent(f"a{i}", profile="Ext") for i in range(8)]
for a in agents:
    wf.edge(s, a)
g = wf.python("gather", gather)
wf.join(agents, g)
wf.start(s)
wf.output(g)
workflow = wf.build()
`;
    const { engine } = project(eight, { turns: [{ steps: [{ delay: 150 }, { message: "done" }] }] });
    const run = engine.run({ workflowId: "wf", trust: true });
    let inFlight = 0;
    let most = 0;
    let queued = 0;
    run.events.on("event", (e) => {
      if (e.type === "attempt_queued") queued++;
      if (e.type === "attempt_started" && e.node_id.startsWith("a")) most = Math.max(most, ++inFlight);
      if ((e.type === "node_completed" || e.type === "attempt_failed") && e.node_id.startsWith("a"))
        inFlight--;
    });
    const report = await run.result;
    expect(report).toMatchObject({ status: "finished", outcome: "completed" });
    expect(most).toBe(4);
    expect(queued).toBe(4);
    await engine.close();
  });

  it("retries an agent that crashed mid-turn in a new session, and does not retry a refusal", async () => {
    const single = `from chrys.workflows import Retry, WorkflowBuilder
wf = WorkflowBuilder("One")
a = wf.agent("a", profile="Ext", retry=Retry(2))
wf.start(a)
wf.output(a)
workflow = wf.build()
`;
    // Each attempt is a new process and session: the first leaves a marker in the workspace (through the
    // engine's fs/write_text_file) and crashes; the second finds it and answers.
    const crashing = project(single, {
      turns: [
        {
          steps: [
            {
              readFile: { path: "marker" },
              onOk: [{ message: "second try" }],
              onError: [
                { message: "partial" },
                { writeFile: { path: "marker", content: "x" } },
                { crash: 3 },
              ],
            },
          ],
        },
      ],
    });
    const report = await crashing.engine.run({ workflowId: "wf", trust: true }).result;
    expect(report).toMatchObject({ status: "finished", outcome: "completed" });
    // The agent echoes what it read ("x") before its answer, in the same segment.
    expect(report.status === "finished" && report.outputs[0]!.text).toMatch(/second try$/);
    expect(readAgentLog(crashing.log).filter((l) => l.event === "start")).toHaveLength(2);
    await crashing.engine.close();

    const refusing = project(single, { turns: [{ steps: [{ message: "no" }, { stop: "refusal" }] }] });
    const refused = await refusing.engine.run({ workflowId: "wf", trust: true }).result;
    expect(refused).toMatchObject({ status: "finished", outcome: "node_failed", error_class: "acp_refused" });
    expect(readAgentLog(refusing.log).filter((l) => l.event === "start")).toHaveLength(1);
    await refusing.engine.close();
  });
});
