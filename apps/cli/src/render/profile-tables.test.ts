import { type AgentListing, AgentListingSchema, type ModelListing } from "@icode/workflow-engine";
import { describe, expect, it } from "vitest";
import {
  AGENT_COLUMNS,
  agentRows,
  agentsText,
  MODEL_COLUMNS,
  modelRows,
  modelsText,
  warningLine,
} from "./profile-tables";

type Agent = AgentListing["agents"][number];
type Model = ModelListing["models"][number];

const agent = (over: Partial<Agent>): Agent => ({
  id: "aaaaaaaaaaaa",
  name: "A",
  displayName: "",
  description: "",
  default: false,
  model: "active",
  source: "user",
  file: "/c/agents/A.yaml",
  kind: "native",
  subAgentOnly: false,
  launchableAsMain: true,
  ...over,
});

const model = (over: Partial<Model>): Model => ({
  id: "m1",
  name: "M",
  provider: "openai",
  apiStyle: "chat_completions",
  modelId: "gpt",
  baseUrl: "https://api.openai.com/v1",
  maxContextTokens: 200000,
  maxOutputTokens: 32000,
  stream: true,
  vision: false,
  usable: true,
  active: false,
  file: "/c/models/m1.yaml",
  ...over,
});

const agentsOf = (...agents: Agent[]): AgentListing =>
  AgentListingSchema.parse({ agents, default: "", problems: [] });
const modelsOf = (...models: Model[]): ModelListing => ({ models, active: "", problems: [] });

describe("icode agents: columns and cells (agent-profiles.md 5)", () => {
  it("has the columns in the table's order", () => {
    expect(AGENT_COLUMNS).toEqual([
      "Default",
      "Name",
      "Display Name",
      "ID",
      "Model",
      "Source",
      "Description",
    ]);
  });

  it.each([
    ["the default agent", { default: true }, { Default: "*" }],
    ["any other agent", { default: false }, { Default: "-" }],
    ["an empty display name and description", {}, { "Display Name": "-", Description: "-" }],
    ["a display name", { displayName: "Code review" }, { "Display Name": "Code review" }],
    ["no id (the write-back failed)", { id: "" }, { ID: "-" }],
    ["no model binding", { model: "active" }, { Model: "active" }],
    ["a bound model", { model: "Local Qwen" }, { Model: "Local Qwen" }],
    ["a missing binding", { model: "missing:zz" }, { Model: "missing:zz" }],
    ["an ACP profile", { model: "acp", kind: "acp" as const }, { Model: "acp" }],
    ["an ACP profile with a model", { model: "acp:fast", kind: "acp" as const }, { Model: "acp:fast" }],
    ["a built-in", { source: "builtin" as const, file: null }, { Source: "builtin" }],
    ["a project profile", { source: "project" as const }, { Source: "project" }],
    ["a description of two lines", { description: "one\ntwo" }, { Description: "one ⏎ two" }],
  ])("%s", (_t, over: Partial<Agent>, cells: Record<string, string>) => {
    const [row] = agentRows(agentsOf(agent(over)));
    const byColumn = Object.fromEntries(AGENT_COLUMNS.map((c, i) => [c, row![i]]));
    expect(byColumn).toMatchObject(cells);
  });

  it("keeps the listing's order", () => {
    const rows = agentRows(agentsOf(agent({ name: "b" }), agent({ name: "C" })));
    expect(rows.map((r) => r[1])).toEqual(["b", "C"]);
  });
});

describe("icode models: columns and cells (agent-profiles.md 5)", () => {
  it("has the columns in the table's order", () => {
    expect(MODEL_COLUMNS).toEqual(["Active", "ID", "Name", "Provider", "API", "Model", "Context", "Flags"]);
  });

  it.each([
    ["the active profile", { active: true }, { Active: "*" }],
    ["another profile", { active: false }, { Active: "-" }],
    ["Chat Completions", { apiStyle: "chat_completions" as const }, { API: "chat" }],
    ["Responses", { apiStyle: "responses" as const }, { API: "responses" }],
    ["no model_id", { modelId: "" }, { Model: "-" }],
    ["a model_id", { modelId: "qwen3-coder" }, { Model: "qwen3-coder" }],
    ["200000 tokens", { maxContextTokens: 200000 }, { Context: "200k" }],
    ["1000000 tokens", { maxContextTokens: 1000000 }, { Context: "1m" }],
    ["2000000 tokens", { maxContextTokens: 2000000 }, { Context: "2m" }],
    ["1500000 tokens", { maxContextTokens: 1500000 }, { Context: "1500k" }],
    ["131072 tokens", { maxContextTokens: 131072 }, { Context: "131072" }],
    ["streaming", { stream: true, vision: false }, { Flags: "stream" }],
    ["vision only", { stream: false, vision: true }, { Flags: "vision" }],
    ["both flags", { stream: true, vision: true }, { Flags: "stream,vision" }],
    ["no flag", { stream: false, vision: false }, { Flags: "-" }],
    ["a provider kept as written", { provider: "mystery" }, { Provider: "mystery" }],
  ])("%s", (_t, over: Partial<Model>, cells: Record<string, string>) => {
    const [row] = modelRows(modelsOf(model(over)));
    const byColumn = Object.fromEntries(MODEL_COLUMNS.map((c, i) => [c, row![i]]));
    expect(byColumn).toMatchObject(cells);
  });
});

describe("warning lines", () => {
  it.each([
    [
      { file: "/c/agents/B.yaml", line: 4, field: "acp.args", message: "expected a list" },
      "Warning: /c/agents/B.yaml:4: acp.args: expected a list",
    ],
    [
      { file: "/c/agents/B.yaml", line: null, field: null, message: "not YAML" },
      "Warning: /c/agents/B.yaml: not YAML",
    ],
    [
      { file: "/c/agents/B.yaml", line: null, field: "name", message: "bad" },
      "Warning: /c/agents/B.yaml: name: bad",
    ],
    [
      { file: null, line: null, field: "agent.default_profile", message: "CHRYS_DEFAULT_AGENT is empty" },
      "Warning: agent.default_profile: CHRYS_DEFAULT_AGENT is empty",
    ],
    [
      { file: "/c/a.yaml", line: 2, field: "x", message: "two\nlines" },
      "Warning: /c/a.yaml:2: x: two ⏎ lines",
    ],
  ])("%j", (problem, line) => {
    expect(warningLine(problem)).toBe(line);
  });
});

describe("the text of a listing", () => {
  it("an empty list prints its message", () => {
    expect(agentsText(agentsOf())).toBe("No agent profiles found.\n");
    expect(modelsText(modelsOf())).toBe("No model profiles found.\n");
  });

  it("a list prints the header and one line per profile", () => {
    expect(agentsText(agentsOf(agent({ name: "A", default: true })))).toBe(
      "Default  Name  Display Name  ID            Model   Source  Description\n" +
        "*        A     -             aaaaaaaaaaaa  active  user    -\n",
    );
    expect(modelsText(modelsOf(model({ active: true })))).toBe(
      "Active  ID  Name  Provider  API   Model  Context  Flags\n" +
        "*       m1  M     openai    chat  gpt    200k     stream\n",
    );
  });
});
