import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ModelProfile } from "@icode/agent-profiles";
import { tmpDir } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { NodeFailure } from "./codes";
import { nativeEffortOptions, nodeApprovalMode, nodeCwd } from "./resolve";

describe("nodeApprovalMode: permission_mode / skip_permissions onto the approval rules", () => {
  // [permission_mode, skip_permissions, launch gear, approval mode]
  const rows = [
    [null, null, "yolo", "bypass"],
    [null, null, "bounded", "manual"],
    ["yolo", null, "bounded", "bypass"],
    ["bounded", null, "yolo", "manual"],
    [null, true, "bounded", "bypass"],
    [null, false, "yolo", "manual"],
    ["yolo", true, "bounded", "bypass"],
    ["bounded", false, "yolo", "manual"],
  ] as const;
  it.each(rows)("permission_mode %s, skip_permissions %s, launch %s → %s", (mode, skip, launch, expected) => {
    expect(nodeApprovalMode({ permission_mode: mode, skip_permissions: skip }, launch)).toBe(expected);
  });
});

function model(provider: string, extra: Partial<ModelProfile> = {}): ModelProfile {
  return { provider, api_style: "chat_completions", max_output_tokens: 32000, ...extra } as ModelProfile;
}

describe("nativeEffortOptions: effort onto the provider's request fields", () => {
  const rows = [
    ["openai", "low", { reasoning_effort: "low" }],
    ["openai", "medium", { reasoning_effort: "medium" }],
    ["openai", "high", { reasoning_effort: "high" }],
    ["openai", "xhigh", { reasoning_effort: "high" }],
    ["openai", "max", { reasoning_effort: "high" }],
    ["deepseek-openai", "low", { reasoning_effort: "low" }],
    ["glm-openai", "max", { reasoning_effort: "high" }],
    ["anthropic", "low", { thinking: { type: "enabled", budget_tokens: 1024 } }],
    ["anthropic", "medium", { thinking: { type: "enabled", budget_tokens: 4096 } }],
    ["anthropic", "high", { thinking: { type: "enabled", budget_tokens: 16000 } }],
    ["anthropic", "xhigh", { thinking: { type: "enabled", budget_tokens: 31999 } }],
    ["anthropic", "max", { thinking: { type: "enabled", budget_tokens: 31999 } }],
  ] as const;
  it.each(rows)("%s, %s", (provider, effort, expected) => {
    expect(nativeEffortOptions(model(provider), effort)).toEqual(expected);
  });

  it("uses reasoning.effort on the Responses API, and has no mapping where none fits", () => {
    expect(nativeEffortOptions(model("openai", { api_style: "responses" }), "xhigh")).toEqual({
      reasoning: { effort: "high" },
    });
    expect(nativeEffortOptions(model("anthropic", { max_output_tokens: 1000 }), "low")).toBeNull();
    expect(nativeEffortOptions(model("someone-else"), "low")).toBeNull();
  });
});

describe("nodeCwd", () => {
  it("resolves a relative cwd against the launch directory and refuses one that does not exist", () => {
    const launch = tmpDir("node-cwd-");
    mkdirSync(join(launch, "pkg"));
    expect(nodeCwd({ cwd: null }, launch)).toBe(launch);
    expect(nodeCwd({ cwd: "pkg" }, launch)).toBe(join(launch, "pkg"));
    expect(nodeCwd({ cwd: join(launch, "pkg") }, "/elsewhere")).toBe(join(launch, "pkg"));
    expect(() => nodeCwd({ cwd: "nope" }, launch)).toThrow(NodeFailure);
    try {
      nodeCwd({ cwd: "nope" }, launch);
    } catch (error) {
      expect((error as NodeFailure).code).toBe("pipeline_node_cwd_invalid");
    }
  });
});
