import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadAgentConfig, matchModel, matchProfile } from "@icode/agent-profiles";
import { describe, expect, it } from "vitest";
import { type PipelineBindings, validatePipeline } from "../src/index";
import { pretty, tempDir } from "./helpers";

// The bindings stage with the engine's resolvers over real profile files: matchProfile and matchModel of
// a configuration loaded from a temporary CHRYS_HOME.
async function bindings(): Promise<PipelineBindings> {
  const home = tempDir();
  const chrysHome = join(home, ".chrys");
  const files: Record<string, string> = {
    "agents/Reviewer.yaml": "name: Reviewer\ninstructions: [Review code.]\n",
    "agents/Claude.yaml": "name: Claude\nacp: {command: claude-code-acp}\n",
    "agents/twin-a.yaml": "name: Twin\ndisplay_name: Same\n",
    "agents/twin-b.yaml": "name: Other\ndisplay_name: Same\n",
    "models/m1.yaml": "name: Local\nmodel_id: qwen\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(chrysHome, rel, ".."), { recursive: true });
    writeFileSync(join(chrysHome, rel), text);
  }
  const config = await loadAgentConfig({ chrysHome, cwd: home, env: {}, homeDir: home, normalize: false });
  return { resolveProfile: (id) => matchProfile(config, id), resolveModel: (s) => matchModel(config, s) };
}

const node = (fields: Record<string, unknown>) => ({
  name: "P",
  nodes: [{ id: "a", name: "A", prompt_template: "{{task}}", ...fields }],
});

describe("the bindings stage", () => {
  it.each([
    [{ profile_id: "Reviewer", model: "Local" }, []],
    [{ profile_id: "reviewer" }, []],
    [{ model: "local" }, []],
    [{ profile_id: "Nobody" }, [["agent_profile_missing", "/nodes/0/profile_id"]]],
    [{ profile_id: "Same" }, [["agent_profile_ambiguous", "/nodes/0/profile_id"]]],
    [{ profile_id: "Reviewer", model: "gpt-9" }, [["model_unresolvable", "/nodes/0/model"]]],
    [{ model: "gpt-9" }, [["model_unresolvable", "/nodes/0/model"]]],
    // An ACP runtime or an ACP profile takes the agent's own model names: not ours to resolve.
    [{ runtime: "claude-code", model: "opus" }, []],
    [{ profile_id: "Claude", model: "opus" }, []],
  ])("%j → %j", async (fields, expected) => {
    const report = validatePipeline(pretty(node(fields)), "/w/p.json", { bindings: await bindings() });
    expect(report.diagnostics.map((d) => [d.code, d.pointer])).toEqual(expected);
    for (const d of report.diagnostics)
      expect(d).toMatchObject({ stage: "bindings", node: "a", severity: "error" });
    expect(report.stages.find((s) => s.name === "bindings")?.status).toBe(
      expected.length === 0 ? "pass" : "fail",
    );
  });

  it("lists the candidates of an ambiguous profile as notes", async () => {
    const report = validatePipeline(pretty(node({ profile_id: "Same" })), null, {
      bindings: await bindings(),
    });
    expect(report.diagnostics[0]!.notes.map((n) => n.message)).toEqual([
      expect.stringContaining("Other"),
      expect.stringContaining("Twin"),
    ]);
  });
});
