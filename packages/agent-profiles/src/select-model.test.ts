import { describe, expect, it } from "vitest";
import { agent, model } from "../test/fixtures";
import { selectNodeModel } from "./select-model";
import { resolveSettings } from "./settings";

const models = [
  model({ id: "bound0000000", name: "Bound", model_id: "b" }),
  model({ id: "node00000000", name: "Node Model", model_id: "n" }),
  model({ id: "wf0000000000", name: "Workflow Model", model_id: "w" }),
  model({ id: "active000000", name: "Active", model_id: "a" }),
  model({ id: "broken000000", name: "Broken" }),
  model({ id: "twin00000001", name: "Twin", model_id: "t" }),
  model({ id: "twin00000002", name: "twin", model_id: "t" }),
];
const settingsWith = (active: string | null, env: Record<string, string> = {}) =>
  resolveSettings({
    env,
    user: active === null ? null : { file: "/c/settings.yaml", values: { model: { profile: { active } } } },
    project: null,
  }).settings;
const config = (active: string | null = "Active") => ({ models, settings: settingsWith(active) });

const bound = agent({ name: "R", model: { profile_id: "bound0000000" } });
const unbound = agent({ name: "U" });
const missingBinding = agent({ name: "M", model: { profile_id: "gone00000000" } });
const brokenBinding = agent({ name: "B", model: { profile_id: "broken000000" } });
const acp = agent({ name: "Ext", acp: { command: "x", model_id: "fast" } });
const acpNoModel = agent({ name: "Ext2", acp: {} });

describe("model priority for native agents", () => {
  it.each([
    ["agent(model=) first", bound, "Node Model", "wf0000000000", "node00000000", "node"],
    ["then the bound model", bound, null, "wf0000000000", "bound0000000", "profile"],
    ["then the workflow default", unbound, null, "Workflow Model", "wf0000000000", "workflow"],
    ["then model.profile.active", unbound, null, null, "active000000", "settings"],
    [
      "a bound model that does not exist falls back to the workflow default",
      missingBinding,
      null,
      "wf0000000000",
      "wf0000000000",
      "workflow",
    ],
    [
      "a bound model that does not exist falls back to the setting",
      missingBinding,
      null,
      null,
      "active000000",
      "settings",
    ],
    ["an unusable bound model falls back", brokenBinding, null, null, "active000000", "settings"],
  ])("%s", (_t, profile, node, workflow, id, from) => {
    const r = selectNodeModel(config(), { profile, model: node, workflowDefault: workflow });
    expect(r).toMatchObject({ ok: true, kind: "native", from });
    if (r.ok) expect(r.model?.id).toBe(id);
  });

  it("notes why the bound model was not used", () => {
    const r = selectNodeModel(config(), { profile: missingBinding, model: null, workflowDefault: null });
    expect(r.ok && r.notes).toEqual([
      'profile "M" binds model id "gone00000000", which no model profile has',
    ]);
  });

  it("binds by id only, never by name", () => {
    const byName = agent({ name: "N", model: { profile_id: "Bound" } });
    const r = selectNodeModel(config(), { profile: byName, model: null, workflowDefault: null });
    expect(r).toMatchObject({ ok: true, from: "settings" });
  });

  it.each([
    [
      "an explicit model that does not exist",
      unbound,
      "gpt-9",
      null,
      "active",
      "model_unresolvable",
      "agent(model=",
    ],
    ["an explicit unusable model", bound, "Broken", null, "Active", "model_unresolvable", "not usable"],
    ["an ambiguous explicit model", bound, "TWIN", null, "Active", "model_ambiguous", "agent(model="],
    [
      "a workflow default that does not resolve",
      unbound,
      null,
      "gone",
      "Active",
      "model_unresolvable",
      "workflow's default model",
    ],
    ["no model at all", unbound, null, null, null, "model_unresolvable", "model.profile.active (not set)"],
    [
      "an active setting that does not resolve names the setting",
      unbound,
      null,
      null,
      "Nope",
      "model_unresolvable",
      "model.profile.active (from /c/settings.yaml)",
    ],
    ["an active setting that is unusable", unbound, null, null, "Broken", "model_unresolvable", "not usable"],
    ["an ambiguous active setting", unbound, null, null, "TWIN", "model_ambiguous", "model.profile.active"],
  ])("%s is an error", (_t, profile, node, workflow, active, code, text) => {
    const r = selectNodeModel(config(active), { profile, model: node, workflowDefault: workflow });
    expect(r).toMatchObject({ ok: false, code });
    if (!r.ok) {
      expect(r.message).toContain(text);
      expect(r.hint.length).toBeGreaterThan(10);
    }
  });

  it("names the environment variable when the active model comes from it", () => {
    const c = { models, settings: settingsWith(null, { CHRYS_MODEL_PROFILE: "nothing" }) };
    const r = selectNodeModel(c, { profile: unbound, model: null, workflowDefault: null });
    expect(!r.ok && r.message).toContain("CHRYS_MODEL_PROFILE");
  });

  it("is ambiguous when the bound id is shared", () => {
    const shared = [...models, model({ id: "bound0000000", name: "Other", model_id: "o" })];
    const r = selectNodeModel(
      { models: shared, settings: settingsWith("Active") },
      { profile: bound, model: null, workflowDefault: null },
    );
    expect(r).toMatchObject({ ok: false, code: "model_ambiguous" });
  });
});

describe("model selection for ACP agents", () => {
  it("an omitted model keeps acp.model_id, not the workflow default", () => {
    expect(selectNodeModel(config(), { profile: acp, model: null, workflowDefault: "wf0000000000" })).toEqual(
      { ok: true, kind: "acp", modelId: "fast", model: null, from: "profile", notes: [] },
    );
  });

  it("no acp.model_id keeps the agent's default", () => {
    expect(
      selectNodeModel(config(), { profile: acpNoModel, model: null, workflowDefault: "wf0000000000" }),
    ).toMatchObject({ ok: true, kind: "acp", modelId: null, from: "profile" });
  });

  it("an explicit model requests its model_id", () => {
    const r = selectNodeModel(config(), { profile: acp, model: "Node Model", workflowDefault: null });
    expect(r).toMatchObject({ ok: true, kind: "acp", modelId: "n", from: "node" });
  });

  it("an explicit model that does not resolve is an error", () => {
    expect(selectNodeModel(config(), { profile: acp, model: "gone", workflowDefault: null })).toMatchObject({
      ok: false,
      code: "model_unresolvable",
    });
  });

  it("needs no model profile at all", () => {
    expect(
      selectNodeModel(
        { models: [], settings: settingsWith(null) },
        { profile: acp, model: null, workflowDefault: null },
      ),
    ).toMatchObject({ ok: true, modelId: "fast" });
  });
});
