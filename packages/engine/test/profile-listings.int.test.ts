/**
 * The engine's profile listings (`engine.listAgents()`, `engine.listModels()` and the one-shot
 * `listAgentsFor` / `listModelsFor`) and the check of a new session's default model (`RunRequest.model`) at
 * start, on real files in a temporary configuration directory.
 */
import { join } from "node:path";
import { tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import {
  AgentListingSchema,
  createEngine,
  listAgentsFor,
  listModelsFor,
  ModelListingSchema,
} from "../src/index";

function project(tree: Record<string, string>) {
  const cwd = tmpDir();
  writeTree(cwd, tree);
  const env = { PATH: join(cwd, "no-bin"), CHRYS_HOME: join(cwd, ".home") };
  return { cwd, env, home: join(cwd, ".home"), engine: createEngine({ cwd, env, homeDir: join(cwd, "u") }) };
}

const TREE = {
  ".home/models/m1.yaml": "name: Local Qwen\nmodel_id: q\napi_key: sk-never-listed\n",
  ".home/models/m2.yaml": "name: big\nmodel_id: b\nmax_context_tokens: nope\n",
  ".home/settings.yaml": "model:\n  profile:\n    active: m1\n",
  ".home/agents/Helper.yaml": "name: Helper\nid: 00000000000a\nmodel:\n  profile_id: m1\n",
  ".home/agents/Bad.yaml": "name: Bad\nsub_agent_only: maybe\n",
  ".chrys/agents/rev.yaml": "name: Reviewer\nacp:\n  command: x\n  model_id: fast\n",
  ".chrys/workflows/echo.py": "raise SystemExit('never loaded')\n",
};

describe("engine.listAgents / engine.listModels", () => {
  it("list the effective agent profiles with the default, bindings, sources and problems", async () => {
    const { engine, home, cwd } = project(TREE);
    const listing = AgentListingSchema.parse(await engine.listAgents());
    expect(listing.default).toBe("Code");
    expect(listing.agents.map((a) => [a.name, a.model, a.source])).toEqual([
      ["Code", "active", "builtin"],
      ["Explore", "active", "builtin"],
      ["General", "active", "builtin"],
      ["Helper", "Local Qwen", "user"],
      ["QA", "active", "builtin"],
      ["Reviewer", "acp:fast", "project"],
    ]);
    expect(listing.agents.find((a) => a.name === "Reviewer")).toMatchObject({
      kind: "acp",
      file: join(cwd, ".chrys", "agents", "rev.yaml"),
      launchableAsMain: false,
    });
    expect(listing.problems).toContainEqual({
      file: join(home, "agents", "Bad.yaml"),
      line: 2,
      field: "sub_agent_only",
      message: expect.any(String),
    });
    expect(listing.problems.some((p) => p.file?.includes("/models/"))).toBe(false);
  });

  it("list the model profiles with the active one, never an API key, and only model-file problems", async () => {
    const { engine, home, cwd, env } = project(TREE);
    const listing = ModelListingSchema.parse(await engine.listModels());
    expect(listing.active).toBe("m1");
    expect(listing.models.map((m) => [m.id, m.name, m.active])).toEqual([["m1", "Local Qwen", true]]);
    expect(JSON.stringify(listing)).not.toContain("sk-never-listed");
    expect(listing.problems).toEqual([
      {
        file: join(home, "models", "m2.yaml"),
        line: 3,
        field: "max_context_tokens",
        message: expect.any(String),
      },
    ]);
    // The one-shot functions give the same, without an engine.
    expect(await listModelsFor({ cwd, env, homeDir: join(cwd, "u") })).toEqual(listing);
    expect((await listAgentsFor({ cwd, env, homeDir: join(cwd, "u") })).default).toBe("Code");
  });
});

describe("RunRequest.model is checked at start", () => {
  it.each([
    ["nope", "model_unresolvable", 'no model profile matches "nope"'],
    ["big", "model_unresolvable", 'no model profile matches "big"'], // m2 was skipped (bad number)
  ])("%s: rejected with %s before the workflow loads", async (model, code, message) => {
    const { engine } = project(TREE);
    const report = await engine.run({ workflowId: "echo", model }).result;
    expect(report).toMatchObject({ status: "rejected", code, session_id: null });
    if (report.status === "rejected") expect(report.message).toContain(message);
    await engine.close();
  });

  it("an ambiguous name is model_ambiguous; a model with a session is request_invalid", async () => {
    const { engine } = project({
      ...TREE,
      ".home/models/t1.yaml": "name: Twin\nmodel_id: a\n",
      ".home/models/t2.yaml": "name: twin\nmodel_id: b\n",
    });
    const ambiguous = await engine.run({ workflowId: "echo", model: "TWIN" }).result;
    expect(ambiguous).toMatchObject({ status: "rejected", code: "model_ambiguous" });
    const withSession = await engine.run({
      workflowId: "echo",
      model: "m1",
      sessionId: "00000000-0000-4000-8000-000000000000",
    }).result;
    expect(withSession).toMatchObject({ status: "rejected", code: "request_invalid" });
    await engine.close();
  });
});
