import { describe, expect, it } from "vitest";
import { readSettingsFile } from "./read/settings";
import { maxTransientRetries } from "./retry";
import { resolveSettings } from "./settings";

const user = (yaml: string) => ({
  file: "/config/settings.yaml",
  values: readSettingsFile(yaml, "/config/settings.yaml", "user").values,
});
const project = (yaml: string) => ({
  file: "/p/.chrys/settings.yaml",
  values: readSettingsFile(yaml, "/p/.chrys/settings.yaml", "project").values,
});

describe("settings sources and precedence (4.3)", () => {
  it("uses the defaults when nothing is set", () => {
    const { settings, problems } = resolveSettings({ env: {}, user: null, project: null });
    expect(problems).toEqual([]);
    expect(settings).toMatchObject({
      defaultProfile: { value: "Code", source: "default" },
      activeModel: { value: null, source: "default" },
      maxTransient: { value: null, source: "default" },
      projectConfigEnabled: false,
      projectSkillsEnabled: false,
    });
  });

  const U =
    "agent: {default_profile: QA}\nmodel: {profile: {active: Local}}\nllm: {retry: {max_transient: 5}}\n";
  it.each<[string, Parameters<typeof resolveSettings>[0], string, string | number | null, string]>([
    ["user settings", { env: {}, user: user(U), project: null }, "defaultProfile", "QA", "user"],
    ["user model", { env: {}, user: user(U), project: null }, "activeModel", "Local", "user"],
    [
      "env over user",
      { env: { CHRYS_DEFAULT_AGENT: "Explore" }, user: user(U), project: null },
      "defaultProfile",
      "Explore",
      "env",
    ],
    [
      "env model over user",
      { env: { CHRYS_MODEL_PROFILE: "Remote" }, user: user(U), project: null },
      "activeModel",
      "Remote",
      "env",
    ],
    [
      "explicit over env",
      {
        explicit: { activeModel: "Cli" },
        env: { CHRYS_MODEL_PROFILE: "Remote" },
        user: user(U),
        project: null,
      },
      "activeModel",
      "Cli",
      "explicit",
    ],
    [
      "an empty env variable is not a value",
      { env: { CHRYS_DEFAULT_AGENT: "  " }, user: user(U), project: null },
      "defaultProfile",
      "QA",
      "user",
    ],
    ["retries from the user", { env: {}, user: user(U), project: null }, "maxTransient", 5, "user"],
    [
      "project lowers retries",
      { env: {}, user: user(U), project: project("llm: {retry: {max_transient: 2}}") },
      "maxTransient",
      2,
      "project",
    ],
    [
      "env over project",
      {
        env: { CHRYS_MAX_TRANSIENT_RETRIES: "7" },
        user: user(U),
        project: project("llm: {retry: {max_transient: 2}}"),
      },
      "maxTransient",
      7,
      "env",
    ],
    [
      "explicit retries",
      { explicit: { maxTransient: 0 }, env: { CHRYS_MAX_TRANSIENT_RETRIES: "7" }, user: null, project: null },
      "maxTransient",
      0,
      "explicit",
    ],
    [
      "project may not raise retries",
      { env: {}, user: user(U), project: project("llm: {retry: {max_transient: 6}}") },
      "maxTransient",
      5,
      "user",
    ],
    [
      "project limit without a user value is 10",
      { env: {}, user: null, project: project("llm: {retry: {max_transient: 11}}") },
      "maxTransient",
      null,
      "default",
    ],
    [
      "project 10 without a user value",
      { env: {}, user: null, project: project("llm: {retry: {max_transient: 10}}") },
      "maxTransient",
      10,
      "project",
    ],
    [
      "invalid env retries skipped",
      { env: { CHRYS_MAX_TRANSIENT_RETRIES: "-1" }, user: user(U), project: null },
      "maxTransient",
      5,
      "user",
    ],
    [
      "invalid user value skipped for the default",
      { env: {}, user: user("llm: {retry: {max_transient: -3}}"), project: null },
      "maxTransient",
      null,
      "default",
    ],
    [
      "invalid user agent skipped",
      { env: {}, user: user("agent: {default_profile: 5}"), project: null },
      "defaultProfile",
      "Code",
      "default",
    ],
  ])("%s", (_t, input, key, value, source) => {
    const { settings } = resolveSettings(input);
    const s = settings[key as "defaultProfile"] as { value: unknown; source: string };
    expect([s.value, s.source]).toEqual([value, source]);
  });

  it("reports a project value above the user's, and an invalid environment value", () => {
    const a = resolveSettings({
      env: {},
      user: user(U),
      project: project("llm: {retry: {max_transient: 6}}"),
    });
    expect(a.problems.map((p) => [p.code, p.field, p.file])).toEqual([
      ["settings_not_allowed", "llm.retry.max_transient", "/p/.chrys/settings.yaml"],
    ]);
    const b = resolveSettings({ env: { CHRYS_MAX_TRANSIENT_RETRIES: "many" }, user: null, project: null });
    expect(b.problems.map((p) => [p.code, p.field, p.file])).toEqual([
      ["config_field_invalid", "llm.retry.max_transient", null],
    ]);
    expect(b.problems[0]?.message).toContain("CHRYS_MAX_TRANSIENT_RETRIES");
  });

  it("reads project.config_enabled and project.skills_enabled from the user settings only", () => {
    const { settings } = resolveSettings({
      env: {},
      user: user("project: {config_enabled: true, skills_enabled: true}"),
      project: null,
    });
    expect([settings.projectConfigEnabled, settings.projectSkillsEnabled]).toEqual([true, true]);
  });
});

describe("reading a settings file", () => {
  it.each<[string, string, "user" | "project", unknown[][]]>([
    ["unknown top key", "theme: dark", "user", [["config_unknown_key", "warning", "theme"]]],
    [
      "unknown nested key",
      "llm: {retry: {max: 3}}",
      "user",
      [["config_unknown_key", "warning", "llm.retry.max"]],
    ],
    [
      "invalid retries",
      "llm: {retry: {max_transient: -1}}",
      "user",
      [["config_field_invalid", "warning", "llm.retry.max_transient"]],
    ],
    [
      "a boolean for config_enabled that is a word",
      "project: {config_enabled: 'yes'}",
      "user",
      [["config_field_invalid", "warning", "project.config_enabled"]],
    ],
    [
      "project settings may not set the default agent",
      "agent: {default_profile: X}",
      "project",
      [["settings_not_allowed", "warning", "agent"]],
    ],
    [
      "project settings may not set the model",
      "model: {profile: {active: X}}\nllm: {retry: {max_transient: 1}}",
      "project",
      [["settings_not_allowed", "warning", "model"]],
    ],
    ["not YAML", "a: [", "user", [["config_not_yaml", "warning", null]]],
    ["not a mapping", "[a]", "user", [["config_not_mapping", "warning", null]]],
    ["dotted keys written flat", "model.profile.active: Local", "user", []],
    [
      "a flat key and the nested one",
      "model.profile.active: A\nmodel: {profile: {active: B}}",
      "user",
      [["config_key_ignored", "warning", "model.profile.active"]],
    ],
    [
      "web tool settings",
      "tools: {web_search: {mode: provider, provider: duckduckgo_html}, web_fetch: {mode: false}}",
      "user",
      [],
    ],
    [
      "web tool settings out of range",
      "tools: {web_fetch: {max_tokens: 0}}",
      "user",
      [["config_field_invalid", "warning", "tools.web_fetch.max_tokens"]],
    ],
  ])("%s", (_t, yaml, scope, expected) => {
    const r = readSettingsFile(yaml, "/s.yaml", scope);
    expect(r.problems.map((p) => [p.code, p.severity, p.field])).toEqual(expected);
  });

  it("keeps the line of a dotted key written flat", () => {
    const r = readSettingsFile("x: 1\nmodel.profile.active: 5\n", "/s.yaml", "user");
    expect(r.problems.map((p) => [p.field, p.line])).toEqual([
      ["x", 1],
      ["model.profile.active", 2],
    ]);
  });

  it("reads the flat form as the nested one", () => {
    const r = readSettingsFile("model.profile.active: Local\n", "/s.yaml", "user");
    expect(
      resolveSettings({ env: {}, user: { file: "/s.yaml", values: r.values }, project: null }).settings
        .activeModel.value,
    ).toBe("Local");
  });
});

describe("request retries (4.4)", () => {
  const s = (value: number | null) => ({ maxTransient: { value, source: "user" as const, origin: null } });
  it.each([
    [null, "cli", 18],
    [null, "interactive", 10],
    [0, "cli", 0],
    [3, "interactive", 3],
    [50, "cli", 50],
    [51, "cli", 50],
    [1000, "interactive", 50],
  ] as const)("max_transient %s in %s mode is %s", (value, mode, expected) => {
    expect(maxTransientRetries(s(value), mode)).toBe(expected);
  });
});
