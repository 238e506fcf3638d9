import { describe, expect, it } from "vitest";
import { agent, model } from "../test/fixtures";
import { BUILTIN_AGENTS } from "./builtins";
import type { AgentConfig } from "./config";
import {
  AgentListingSchema,
  agentModelLabel,
  formatContextTokens,
  listAgents,
  listModels,
  ModelListingSchema,
} from "./listings";
import { resolveSettings } from "./settings";

function config(partial: Partial<AgentConfig>): AgentConfig {
  return {
    profiles: [],
    hidden: [],
    models: [],
    settings: resolveSettings({ env: {}, user: null, project: null }).settings,
    defaultProfile: null,
    activeModel: null,
    problems: [],
    changes: [],
    locations: {
      userAgents: "/c/agents",
      projectAgents: "/p/.chrys/agents",
      models: "/c/models",
      userSettings: "/c/settings.yaml",
      projectSettings: null,
    },
    ...partial,
  };
}

describe("Context column", () => {
  it.each([
    [200000, "200k"],
    [131072, "131072"],
    [1000000, "1m"],
    [2000000, "2m"],
    [1500000, "1500k"],
    [128000, "128k"],
    [100, "100"],
    [0, "0"],
  ])("%i is %s", (n, text) => {
    expect(formatContextTokens(n)).toBe(text);
  });
});

describe("Model column of icode agents", () => {
  const models = [model({ id: "m1", name: "Local Qwen", model_id: "q" })];
  it.each([
    ["no binding", agent({ name: "A" }), "active"],
    ["a bound profile", agent({ name: "A", model: { profile_id: "m1" } }), "Local Qwen"],
    ["a missing binding", agent({ name: "A", model: { profile_id: "zz" } }), "missing:zz"],
    ["an ACP profile", agent({ name: "A", acp: {} }), "acp"],
    ["an ACP profile with a model", agent({ name: "A", acp: { model_id: "fast" } }), "acp:fast"],
  ])("%s", (_t, p, label) => {
    expect(agentModelLabel({ models }, p)).toBe(label);
  });
});

describe("icode agents --json and icode models --json (section 5)", () => {
  it("lists agents in the shape of the reference", () => {
    const code = {
      ...BUILTIN_AGENTS[0]!,
      source: "builtin" as const,
      file: null,
      digest: null,
      kind: "native" as const,
    };
    const ext = agent(
      {
        name: "ExternalReviewer",
        display_name: "External reviewer",
        acp: { command: "x", model_id: "fast" },
      },
      { file: "/c/agents/ExternalReviewer.yaml" },
    );
    const c = config({
      profiles: [code, ext],
      defaultProfile: code,
      problems: [
        {
          code: "config_field_invalid",
          severity: "error",
          file: "/c/agents/Broken.yaml",
          line: 4,
          field: "acp.args",
          message: "m",
        },
        {
          code: "config_field_invalid",
          severity: "warning",
          file: "/c/models/x.yaml",
          line: 2,
          field: "vision",
          message: "model problem",
        },
      ],
    });
    const listing = listAgents(c);
    expect(AgentListingSchema.parse(listing)).toEqual(listing);
    expect(listing).toEqual({
      agents: [
        {
          id: "b011c0de0001",
          name: "Code",
          displayName: "Code Agent",
          description: code.description,
          default: true,
          model: "active",
          source: "builtin",
          file: null,
          kind: "native",
          subAgentOnly: false,
          launchableAsMain: true,
        },
        {
          id: "",
          name: "ExternalReviewer",
          displayName: "External reviewer",
          description: "",
          default: false,
          model: "acp:fast",
          source: "user",
          file: "/c/agents/ExternalReviewer.yaml",
          kind: "acp",
          subAgentOnly: true,
          launchableAsMain: false,
        },
      ],
      default: "Code",
      problems: [{ file: "/c/agents/Broken.yaml", line: 4, field: "acp.args", message: "m" }],
    });
  });

  it("writes default as empty when no agent resolves", () => {
    expect(listAgents(config({})).default).toBe("");
  });

  it("lists models without API keys, with the active one marked", () => {
    const local = model({
      id: "3f9c2a71b0de",
      name: "Local Qwen",
      model_id: "qwen3-coder",
      base_url: "http://127.0.0.1:8000/v1",
      api_key: "sk-secret",
      max_context_tokens: 131072,
      max_output_tokens: 16384,
    });
    const claude = model({
      id: "c1",
      name: "Claude",
      provider: "anthropic",
      model_id: "claude",
      api_key_env: "ANTHROPIC_KEY",
      vision: true,
    });
    const c = config({
      models: [claude, local],
      activeModel: local,
      problems: [
        {
          code: "config_unknown_key",
          severity: "warning",
          file: "/c/agents/a.yaml",
          line: 1,
          field: "x",
          message: "agent problem",
        },
      ],
    });
    const listing = listModels(c);
    expect(ModelListingSchema.parse(listing)).toEqual(listing);
    expect(listing.models[1]).toEqual({
      id: "3f9c2a71b0de",
      name: "Local Qwen",
      provider: "openai",
      apiStyle: "chat_completions",
      modelId: "qwen3-coder",
      baseUrl: "http://127.0.0.1:8000/v1",
      maxContextTokens: 131072,
      maxOutputTokens: 16384,
      stream: true,
      vision: false,
      usable: true,
      active: true,
      file: "/config/models/3f9c2a71b0de.yaml",
    });
    expect(listing.models[0]).toMatchObject({
      baseUrl: "https://api.anthropic.com",
      active: false,
      vision: true,
    });
    expect(listing.active).toBe("3f9c2a71b0de");
    expect(listing.problems).toEqual([]);
    expect(JSON.stringify(listing)).not.toContain("sk-secret");
    expect(JSON.stringify(listing)).not.toContain("ANTHROPIC_KEY");
    expect(listModels(config({ models: [claude] })).active).toBe("");
  });
});
