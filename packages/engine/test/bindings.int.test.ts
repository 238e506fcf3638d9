import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/index";

const REVIEW = `from chrys.workflows import WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Review")


def prepare(value: WorkflowValue) -> str:
    return value.text


p = wf.python("prepare", prepare)
r = wf.agent("review", profile=PROFILE, model=MODEL)
wf.edge(p, r)
wf.start(p)
wf.output(r)
workflow = wf.build()
`;

const MODEL_FILE = (id: string, name: string) => `id: ${id}
name: ${name}
provider: openai
model_id: qwen3-coder
base_url: http://127.0.0.1:9/v1
api_key: local
`;

function project(profile: string, model: string | null, files: Record<string, string> = {}) {
  const cwd = tmpDir();
  const source = REVIEW.replace("PROFILE", JSON.stringify(profile)).replace(
    "MODEL",
    model === null ? "None" : JSON.stringify(model),
  );
  writeTree(cwd, { ".chrys/workflows/review.py": source, ...files });
  const env = { ...process.env, CHRYS_HOME: join(cwd, ".home"), CHRYS_MODEL_PROFILE: undefined };
  return { cwd, engine: createEngine({ cwd, env, homeDir: join(cwd, "home") }) };
}

const AGENT_LINE = 11;

describe("the bindings stage: agent nodes against this computer's profiles and models", () => {
  it("reports a profile that does not exist at the agent() line, with file:line:col", async () => {
    const { engine, cwd } = project("Nobody", null);
    const report = await engine.validate(join(cwd, ".chrys/workflows/review.py"));
    expect(report.status).toBe("fail");
    expect(report.stages.find((s) => s.name === "bindings")?.status).toBe("fail");
    expect(report.diagnostics).toMatchObject([
      {
        code: "agent_profile_missing",
        stage: "bindings",
        node: "review",
        file: join(cwd, ".chrys/workflows/review.py"),
        line: AGENT_LINE,
        source_line: expect.stringContaining('wf.agent("review"'),
      },
    ]);
  });

  it("reports two profiles matching at the same step as ambiguous, naming both", async () => {
    const { engine, cwd } = project("reviewer", null, {
      ".chrys/agents/a.yaml": "name: Reviewer\ndisplay_name: one\n",
      ".chrys/agents/b.yaml": "name: REVIEWER\ndisplay_name: two\n",
    });
    const report = await engine.validate(join(cwd, ".chrys/workflows/review.py"));
    expect(report.diagnostics).toMatchObject([{ code: "agent_profile_ambiguous", line: AGENT_LINE }]);
    const notes = report.diagnostics[0]!.notes.map((n) => n.message).join(" ");
    expect(notes).toContain("Reviewer");
    expect(notes).toContain("REVIEWER");
  });

  it("reports an agent with no usable model as model_unresolvable, and passes once one is configured", async () => {
    const files = { ".chrys/agents/r.yaml": "name: Reviewer\n" };
    const { engine, cwd } = project("Reviewer", null, files);
    const path = join(cwd, ".chrys/workflows/review.py");
    const report = await engine.validate(path);
    expect(report.diagnostics).toMatchObject([
      { code: "model_unresolvable", node: "review", line: AGENT_LINE },
    ]);
    writeTree(join(cwd, ".home"), { "models/aaaaaaaaaaaa.yaml": MODEL_FILE("aaaaaaaaaaaa", "Local Qwen") });
    writeFileSync(join(cwd, ".home", "settings.yaml"), "model:\n  profile:\n    active: Local Qwen\n");
    const passed = await engine.validate(path);
    expect(passed.diagnostics).toEqual([]);
    expect(passed.status).toBe("pass");
  });

  it("reports an explicit model=… that does not exist", async () => {
    const { engine, cwd } = project("Reviewer", "nope", { ".chrys/agents/r.yaml": "name: Reviewer\n" });
    const report = await engine.validate(join(cwd, ".chrys/workflows/review.py"));
    expect(report.diagnostics).toMatchObject([{ code: "model_unresolvable", node: "review" }]);
    expect(report.diagnostics[0]!.message).toMatch(/nope/);
  });
});

describe("trust of project agent profiles that start programs", () => {
  const ACP_PROFILE = "name: Ext\nacp:\n  command: some-acp-agent\n  args: [--acp]\n";

  it("a run needs --trust for a project ACP profile, names its command, and again after the profile changes", async () => {
    const { engine, cwd } = project("Ext", null, { ".chrys/agents/ext.yaml": ACP_PROFILE });
    // Before any of its code runs, the refusal already names the project's profiles that start programs.
    const refused = await engine.run({ workflowId: "review" }).result;
    expect(refused).toMatchObject({ status: "rejected", code: "trust_required" });
    expect(refused.status === "rejected" && refused.message).toMatch(
      /project agent profile 'Ext'.*some-acp-agent --acp/,
    );
    // --trust confirms the workflow and the profiles it uses; the run goes ahead (the agent itself is not
    // installed here, which fails its node, not the trust check).
    const trusted = await engine.run({ workflowId: "review", trust: true }).result;
    expect(trusted).toMatchObject({ status: "finished" });
    const again = await engine.run({ workflowId: "review" }).result;
    expect(again).toMatchObject({ status: "finished" });
    // Editing the profile requires trust again.
    writeFileSync(join(cwd, ".chrys/agents/ext.yaml"), `${ACP_PROFILE}  model_id: fast\n`);
    const changed = await engine.run({ workflowId: "review" }).result;
    expect(changed).toMatchObject({ status: "rejected", code: "trust_required" });
    expect(changed.status === "rejected" && changed.message).toMatch(
      /changed since it was trusted \(profiles\)/,
    );
    expect(changed.status === "rejected" && changed.message).toMatch(/some-acp-agent --acp/);
    await engine.close();
  });

  it("a project profile that starts no program needs no trust beyond the workflow's", async () => {
    const files = {
      ".chrys/agents/r.yaml": "name: Reviewer\n",
      ".home/models/aaaaaaaaaaaa.yaml": MODEL_FILE("aaaaaaaaaaaa", "Local Qwen"),
      ".home/settings.yaml": "model:\n  profile:\n    active: Local Qwen\n",
    };
    const { engine, cwd } = project("Reviewer", null, files);
    expect(await engine.trust("review")).toMatchObject({ ok: true });
    writeTree(cwd, { ".chrys/agents/r.yaml": "name: Reviewer\ndescription: edited\n" });
    const preview = await engine.preview("review");
    expect(preview?.trust).toMatchObject({ trusted: true });
    await engine.close();
  });
});
