import { describe, expect, it } from "vitest";
import { at } from "../../test/fixtures";
import { readAgentProfile } from "./agent-profile";

type P = { code: string; severity: "error" | "warning"; field: string | null; line?: number | null };

function read(yaml: string) {
  const r = readAgentProfile(yaml, "/config/agents/T.yaml");
  return {
    ...r,
    loaded: r.settings !== null,
    brief: r.problems.map((p) => ({ code: p.code, severity: p.severity, field: p.field, line: p.line })),
  };
}

const err = (field: string | null, line?: number | null): P => ({
  code: "config_field_invalid",
  severity: "error",
  field,
  ...(line === undefined ? {} : { line }),
});
const warn = (field: string | null, line?: number | null): P => ({
  code: "config_field_invalid",
  severity: "warning",
  field,
  ...(line === undefined ? {} : { line }),
});

function expectProblems(yaml: string, expected: P[]) {
  const r = read(yaml);
  expect(r.brief.map((p) => ({ code: p.code, severity: p.severity, field: p.field }))).toEqual(
    expected.map(({ line: _l, ...p }) => p),
  );
  expected.forEach((p, i) => {
    if (p.line !== undefined) expect(r.brief[i]?.line).toBe(p.line);
  });
  for (const p of r.problems) {
    expect(p.file).toBe("/config/agents/T.yaml");
    expect(p.message.length).toBeGreaterThan(10);
  }
  return r;
}

describe("fields and defaults (section 2)", () => {
  it("fills every default for a profile that has only a name", () => {
    const r = read("name: T\n");
    expect(r.problems).toEqual([]);
    expect(r.settings).toEqual({
      name: "T",
      display_name: "",
      description: "",
      sub_agent_only: false,
      instructions: "",
      model: { profile_id: "" },
      tools: { builtins: [], mcp: [] },
      approval: {
        default: "auto",
        overrides: { shell: "require", "filesystem.write": "require", todo: "skip" },
      },
      skills: {
        paths: [],
        inline: [],
        script_timeout: 300,
        script_extensions: [".py", ".sh", ".ps1"],
        auto_load_user_agents_skills: true,
        auto_load_cwd_agents_skills: true,
      },
      memory: { files: [], folders: [] },
      compaction: {
        last_words_template: "",
        last_words_max_output_tokens: 20000,
        phase4_side_call_token_budget: -1,
        enabled: true,
      },
      sub_agents: { max_total_concurrency: 3, agents: [] },
    });
  });

  it.each([
    ["name is trimmed", "name: '  T  '", "name", "T"],
    ["id is trimmed", "name: T\nid: ' abc '", "id", "abc"],
    ["instructions list joined with \\n", "name: T\ninstructions: [a, b]", "instructions", "a\nb"],
    [
      "approval default only keeps the three overrides",
      "name: T\napproval: {default: require}",
      "approval",
      { default: "require", overrides: { shell: "require", "filesystem.write": "require", todo: "skip" } },
    ],
    ["overrides: {} removes them", "name: T\napproval: {overrides: {}}", "approval.overrides", {}],
    [
      "overrides replace the three",
      "name: T\napproval: {overrides: {grep: require}}",
      "approval.overrides",
      { grep: "require" },
    ],
    [
      "shell_filter scalar is a preset",
      "name: T\ntools: {shell_filter: read_only}",
      "tools.shell_filter.preset",
      "read_only",
    ],
    [
      "mcp defaults (stdio)",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: srv}]}",
      "tools.mcp[0]",
      {
        name: "s",
        transport: "stdio",
        command: "srv",
        enabled: true,
        description: "",
        tool_name_prefix: "",
        allowed_tools: null,
        use_progressive_disclosure: false,
        always_load: [],
        load_prompts: true,
        expose_instructions: true,
        timeout: 30,
        max_tool_result_tokens: 8000,
        args: [],
        env: {},
        encoding: null,
      },
    ],
    [
      "mcp defaults (http)",
      "name: T\ntools: {mcp: [{name: s, transport: http, url: 'https://x'}]}",
      [
        "tools.mcp[0].headers",
        "tools.mcp[0].resolve_header_templates",
        "tools.mcp[0].verify_ssl",
        "tools.mcp[0].bypass_proxy",
        "tools.mcp[0].terminate_on_close",
      ],
      [{}, true, true, false, true],
    ],
    [
      "max_tool_result_tokens 0 removes the limit",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, max_tool_result_tokens: 0}]}",
      "tools.mcp[0].max_tool_result_tokens",
      0,
    ],
    [
      "phase4 budget null is unlimited",
      "name: T\ncompaction: {phase4_side_call_token_budget: null}",
      "compaction.phase4_side_call_token_budget",
      -1,
    ],
    [
      "script extensions get a leading dot",
      "name: T\nskills: {script_extensions: [py, .SH]}",
      "skills.script_extensions",
      [".py", ".sh"],
    ],
    [
      "inline resources with empty content are ignored",
      "name: T\nskills: {inline: [{name: a, description: d, resources: [{name: r}, {name: q, content: c}]}]}",
      "skills.inline[0].resources",
      [{ name: "q", description: "", content: "c" }],
    ],
    [
      "acp: (null) is an ACP agent with defaults",
      "name: T\nacp:",
      ["acp", "sub_agent_only"],
      [
        {
          command: "",
          args: [],
          env: {},
          cwd: "",
          allow_external_cwd: false,
          session_mode: "",
          model_id: "",
          config_options: {},
          best_effort_options: false,
          result_mode: "last_segment",
          handshake_timeout_seconds: 30,
          idle_timeout_seconds: 600,
        },
        true,
      ],
    ],
    ["acp: {} is an ACP agent", "name: T\nacp: {}", "acp.result_mode", "last_segment"],
    [
      "web_search mode true is auto",
      "name: T\ntools: {builtins: [web_search], web_search: {mode: true}}",
      "tools.web_search.mode",
      "auto",
    ],
    [
      "YAML 1.2 core: on is a string",
      "name: T\nacp: {config_options: {x: on, y: true}}",
      "acp.config_options",
      { x: "on", y: true },
    ],
  ])("%s", (_title, yaml, pick, expected) => {
    const r = read(yaml);
    expect(r.brief.filter((p) => p.severity === "error")).toEqual([]);
    expect(at(r.settings, pick)).toEqual(expected);
  });

  it("accepts metadata, tools.custom and approval.user_can_override silently", () => {
    const r = read("name: T\nmetadata: {a: 1}\ntools: {custom: [x]}\napproval: {user_can_override: true}\n");
    expect(r.problems).toEqual([]);
    expect(r.loaded).toBe(true);
  });
});

describe("file-level problems", () => {
  it.each([
    ["not YAML", "name: [\n", "config_not_yaml", 2],
    ["duplicate keys", "name: a\nname: b\n", "config_not_yaml", 2],
    ["two documents", "name: a\n---\nname: b\n", "config_not_yaml", 2],
    ["a list", "- name: a\n", "config_not_mapping", null],
    ["a scalar", "hello\n", "config_not_mapping", null],
    ["empty", "", "config_not_mapping", null],
  ])("%s is skipped", (_t, yaml, code, line) => {
    const r = read(yaml);
    expect(r.loaded).toBe(false);
    expect(r.brief).toEqual([{ code, severity: "error", field: null, line }]);
  });
});

describe("load errors skip the profile (one row per rule)", () => {
  it.each<[string, string, P[]]>([
    ["name missing", "display_name: x", [err("name", null)]],
    ["name not a string", "name: 123", [err("name", 1)]],
    ["name empty", "name: '  '", [err("name")]],
    ["name with /", "name: a/b", [err("name")]],
    ["name with \\", "name: 'a\\b'", [err("name")]],
    ["name with :", "name: 'a:b'", [err("name")]],
    ["name with *", "name: 'a*'", [err("name")]],
    ["name with ?", "name: 'a?'", [err("name")]],
    ['name with "', "name: 'a\"b'", [err("name")]],
    ["name with <", "name: 'a<b'", [err("name")]],
    ["name with |", "name: 'a|b'", [err("name")]],
    ["name with a control character", 'name: "a\\x01b"', [err("name")]],
    ["name with NUL", 'name: "a\\0b"', [err("name")]],
    ["name ..", "name: '..'", [err("name")]],
    ["name .", "name: '.'", [err("name")]],
    ["name ending in a dot", "name: 'a.'", [err("name")]],
    ["name CON", "name: CON", [err("name")]],
    ["name com1 (any case)", "name: com1", [err("name")]],
    ["name LPT9.txt", "name: LPT9.txt", [err("name")]],
    ["id an unquoted number", "name: T\nid: 123", [err("id", 2)]],
    ["id in exponent form", "name: T\nid: 1e5", [err("id", 2)]],
    ["id a boolean", "name: T\nid: true", [err("id")]],
    ["sub_agent_only not a boolean", "name: T\nsub_agent_only: 'yes'", [err("sub_agent_only", 2)]],
    ["sub_agent_only a number", "name: T\nsub_agent_only: 1", [err("sub_agent_only")]],
    ["approval not a mapping", "name: T\napproval: auto", [err("approval")]],
    ["approval.default a YAML boolean", "name: T\napproval: {default: true}", [err("approval.default")]],
    ["approval.default unknown", "name: T\napproval: {default: ask}", [err("approval.default")]],
    [
      "override level a boolean",
      "name: T\napproval:\n  overrides:\n    shell: false",
      [err("approval.overrides.shell", 4)],
    ],
    [
      "override level 'yes'",
      "name: T\napproval: {overrides: {shell: 'yes'}}",
      [err("approval.overrides.shell")],
    ],
    [
      "override key not a string",
      "name: T\napproval: {overrides: {1: require}}",
      [err("approval.overrides.1")],
    ],
    ["override key empty", "name: T\napproval: {overrides: {'': require}}", [err('approval.overrides[""]')]],
    ["overrides not a mapping", "name: T\napproval: {overrides: [shell]}", [err("approval.overrides")]],
    ["mcp not a list", "name: T\ntools: {mcp: {name: s}}", [err("tools.mcp")]],
    ["mcp entry not a mapping", "name: T\ntools: {mcp: [x]}", [err("tools.mcp[0]")]],
    [
      "mcp transport missing",
      "name: T\ntools: {mcp: [{name: s, command: c}]}",
      [err("tools.mcp[0].transport")],
    ],
    [
      "mcp transport unknown",
      "name: T\ntools: {mcp: [{name: s, transport: sse, url: 'http://x'}]}",
      [err("tools.mcp[0].transport")],
    ],
    [
      "mcp name missing",
      "name: T\ntools: {mcp: [{transport: stdio, command: c}]}",
      [err("tools.mcp[0].name")],
    ],
    [
      "mcp stdio without command",
      "name: T\ntools: {mcp: [{name: s, transport: stdio}]}",
      [err("tools.mcp[0].command")],
    ],
    [
      "mcp http without url",
      "name: T\ntools: {mcp: [{name: s, transport: http}]}",
      [err("tools.mcp[0].url")],
    ],
    [
      "mcp http url not http(s)",
      "name: T\ntools: {mcp: [{name: s, transport: http, url: 'ftp://x'}]}",
      [err("tools.mcp[0].url")],
    ],
    [
      "mcp names equal ignoring case",
      "name: T\ntools:\n  mcp:\n    - {name: GH, transport: stdio, command: a}\n    - {name: gh, transport: stdio, command: b}",
      [err("tools.mcp[1].name", 5)],
    ],
    [
      "mcp prefix starts with -",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, tool_name_prefix: -gh}]}",
      [err("tools.mcp[0].tool_name_prefix")],
    ],
    [
      "mcp prefix with a dot",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, tool_name_prefix: g.h}]}",
      [err("tools.mcp[0].tool_name_prefix")],
    ],
    [
      "mcp prefix over 49 with disclosure",
      `name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, use_progressive_disclosure: true, tool_name_prefix: ${"p".repeat(50)}}]}`,
      [err("tools.mcp[0].tool_name_prefix")],
    ],
    [
      "mcp prefix over 64",
      `name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, tool_name_prefix: ${"p".repeat(65)}}]}`,
      [err("tools.mcp[0].tool_name_prefix")],
    ],
    [
      "mcp disclosure with allowed_tools []",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, use_progressive_disclosure: true, allowed_tools: []}]}",
      [err("tools.mcp[0].use_progressive_disclosure")],
    ],
    [
      "mcp always_load without disclosure",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, always_load: [a]}]}",
      [err("tools.mcp[0].always_load")],
    ],
    [
      "mcp always_load outside allowed_tools",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, use_progressive_disclosure: true, allowed_tools: [a], always_load: [b]}]}",
      [err("tools.mcp[0].always_load")],
    ],
    [
      "mcp names that collide after the prefix",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, tool_name_prefix: github, allowed_tools: [search, _search]}]}",
      [err("tools.mcp[0].allowed_tools[1]")],
    ],
    [
      "mcp listed name equal to a control tool",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, tool_name_prefix: gh, use_progressive_disclosure: true, allowed_tools: [list_mcp_tools]}]}",
      [err("tools.mcp[0].allowed_tools[0]")],
    ],
    [
      "mcp full tool name over 64",
      `name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, tool_name_prefix: ${"p".repeat(60)}, allowed_tools: [search]}]}`,
      [err("tools.mcp[0].allowed_tools[0]")],
    ],
    [
      "mcp timeout 0",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, timeout: 0}]}",
      [err("tools.mcp[0].timeout")],
    ],
    [
      "mcp timeout not an integer",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, timeout: 1.5}]}",
      [err("tools.mcp[0].timeout")],
    ],
    [
      "mcp max_tool_result_tokens 50",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, max_tool_result_tokens: 50}]}",
      [err("tools.mcp[0].max_tool_result_tokens")],
    ],
    [
      "mcp enabled not a boolean",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, enabled: 'yes'}]}",
      [err("tools.mcp[0].enabled")],
    ],
    [
      "mcp args not strings",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, args: [1]}]}",
      [err("tools.mcp[0].args[0]")],
    ],
    [
      "web_search num_results 21",
      "name: T\ntools: {builtins: [web_search], web_search: {num_results: 21}}",
      [err("tools.web_search.num_results")],
    ],
    [
      "web_search timeout 0",
      "name: T\ntools: {web_search: {timeout_seconds: 0}}",
      [err("tools.web_search.timeout_seconds")],
    ],
    [
      "web_search mode unknown",
      "name: T\ntools: {web_search: {mode: sometimes}}",
      [err("tools.web_search.mode")],
    ],
    [
      "web_search chain over 5",
      "name: T\ntools: {web_search: {fallback_chain: [a, b, c, d, e, f]}}",
      [err("tools.web_search.fallback_chain")],
    ],
    [
      "web_search chain repeats",
      "name: T\ntools: {web_search: {fallback_chain: [a, a]}}",
      [err("tools.web_search.fallback_chain")],
    ],
    [
      "web_search keyed provider without api_key_env",
      "name: T\ntools: {web_search: {providers: {t: {type: tavily}}}}",
      [err("tools.web_search.providers.t.api_key_env")],
    ],
    [
      "web_search provider type unknown",
      "name: T\ntools: {web_search: {providers: {t: {type: google}}}}",
      [err("tools.web_search.providers.t.type")],
    ],
    [
      "web_search custom_http without url",
      "name: T\ntools: {web_search: {providers: {c: {type: custom_http}}}}",
      [err("tools.web_search.providers.c.url")],
    ],
    [
      "web_fetch max_tokens 64001",
      "name: T\ntools: {web_fetch: {max_tokens: 64001}}",
      [err("tools.web_fetch.max_tokens")],
    ],
    [
      "web_fetch timeout 121",
      "name: T\ntools: {web_fetch: {timeout_seconds: 121}}",
      [err("tools.web_fetch.timeout_seconds")],
    ],
    ["inline skills not a list", "name: T\nskills: {inline: {name: a}}", [err("skills.inline")]],
    [
      "inline skill bad name",
      "name: T\nskills: {inline: [{name: Bad_Name, description: d}]}",
      [err("skills.inline[0].name")],
    ],
    [
      "inline skill name with double hyphen",
      "name: T\nskills: {inline: [{name: a--b, description: d}]}",
      [err("skills.inline[0].name")],
    ],
    [
      "inline skill name over 64",
      `name: T\nskills: {inline: [{name: ${"a".repeat(65)}, description: d}]}`,
      [err("skills.inline[0].name")],
    ],
    [
      "inline skill without description",
      "name: T\nskills: {inline: [{name: a}]}",
      [err("skills.inline[0].description")],
    ],
    [
      "inline skill description over 1024",
      `name: T\nskills: {inline: [{name: a, description: ${"d".repeat(1025)}}]}`,
      [err("skills.inline[0].description")],
    ],
    [
      "inline resource without name",
      "name: T\nskills: {inline: [{name: a, description: d, resources: [{content: x}]}]}",
      [err("skills.inline[0].resources[0].name")],
    ],
    [
      "last_words_template not a string",
      "name: T\ncompaction: {last_words_template: 5}",
      [err("compaction.last_words_template")],
    ],
    [
      "phase4 budget below -1",
      "name: T\ncompaction: {phase4_side_call_token_budget: -2}",
      [err("compaction.phase4_side_call_token_budget")],
    ],
    [
      "phase4 budget not an integer",
      "name: T\ncompaction: {phase4_side_call_token_budget: 1.5}",
      [err("compaction.phase4_side_call_token_budget")],
    ],
    ["acp not a mapping", "name: T\nacp: some-agent", [err("acp")]],
    ["acp command not a string", "name: T\nacp: {command: 5}", [err("acp.command")]],
    ["acp command with NUL", 'name: T\nacp: {command: "a\\0b"}', [err("acp.command")]],
    ["acp args not a list", "name: T\nacp: {args: --acp}", [err("acp.args")]],
    ["acp args item not a string", "name: T\nacp: {args: [--x, 1]}", [err("acp.args[1]")]],
    ["acp args item with NUL", 'name: T\nacp: {args: ["a\\0"]}', [err("acp.args[0]")]],
    ["acp env not a mapping", "name: T\nacp: {env: [A]}", [err("acp.env")]],
    ["acp env name invalid", "name: T\nacp: {env: {1A: x}}", [err("acp.env.1A")]],
    [
      "acp env reserved name",
      "name: T\nacp: {env: {CHRYS_ACP_SUBAGENT_DEPTH: '1'}}",
      [err("acp.env.CHRYS_ACP_SUBAGENT_DEPTH")],
    ],
    [
      "acp env reserved name in another case",
      "name: T\nacp: {env: {chrys_acp_subagent_depth: '1'}}",
      [err("acp.env.chrys_acp_subagent_depth")],
    ],
    [
      "acp env names equal ignoring case",
      "name: T\nacp:\n  env:\n    API_KEY: a\n    api_key: b",
      [err("acp.env.api_key", 5)],
    ],
    ["acp env value not a string", "name: T\nacp: {env: {A: 1}}", [err("acp.env.A")]],
    ["acp env value with NUL", 'name: T\nacp: {env: {A: "x\\0"}}', [err("acp.env.A")]],
    ["acp cwd with NUL", 'name: T\nacp: {cwd: "a\\0"}', [err("acp.cwd")]],
    [
      "acp allow_external_cwd not a boolean",
      "name: T\nacp: {allow_external_cwd: 'no'}",
      [err("acp.allow_external_cwd")],
    ],
    [
      "acp config_options empty key",
      "name: T\nacp: {config_options: {'': x}}",
      [err('acp.config_options[""]')],
    ],
    [
      "acp config_options value a number",
      "name: T\nacp: {config_options: {a: 1}}",
      [err("acp.config_options.a")],
    ],
    [
      "acp best_effort_options not a boolean",
      "name: T\nacp: {best_effort_options: 1}",
      [err("acp.best_effort_options")],
    ],
    ["acp result_mode unknown", "name: T\nacp: {result_mode: all}", [err("acp.result_mode")]],
  ])("%s", (_title, yaml, expected) => {
    const r = expectProblems(yaml, expected);
    expect(r.loaded).toBe(false);
    expect(r.settings).toBeNull();
  });

  it("names the readable name of a skipped profile", () => {
    expect(read("name: Code\nsub_agent_only: 2").name).toBe("Code");
  });

  it("reports every load error of a file, not only the first", () => {
    const r = read("name: T\nid: 5\nsub_agent_only: x\n");
    expect(r.brief.map((p) => p.field)).toEqual(["id", "sub_agent_only"]);
  });
});

describe("warnings keep the profile and fall back to the default", () => {
  it.each<[string, string, P[], (string | string[])?, unknown?]>([
    ["display_name not a string", "name: T\ndisplay_name: 5", [warn("display_name", 2)], "display_name", ""],
    ["description a list", "name: T\ndescription: [a]", [warn("description")], "description", ""],
    ["instructions a number", "name: T\ninstructions: 5", [warn("instructions")], "instructions", ""],
    [
      "instructions a list with a number",
      "name: T\ninstructions: [a, 1]",
      [warn("instructions")],
      "instructions",
      "",
    ],
    ["model not a mapping", "name: T\nmodel: gpt-4", [warn("model")], "model", { profile_id: "" }],
    [
      "legacy model.profile",
      "name: T\nmodel: {profile: Local Qwen}",
      [{ code: "config_key_ignored", severity: "warning", field: "model.profile" }],
      "model.profile_id",
      "",
    ],
    [
      "model.profile_id a number",
      "name: T\nmodel: {profile_id: 5}",
      [warn("model.profile_id")],
      "model.profile_id",
      "",
    ],
    ["tools a list", "name: T\ntools: [shell]", [warn("tools")], "tools.builtins", []],
    [
      "builtins a string",
      "name: T\ntools: {builtins: shell}",
      [warn("tools.builtins")],
      "tools.builtins",
      [],
    ],
    [
      "builtins non-string item dropped",
      "name: T\ntools: {builtins: [shell, 3]}",
      [warn("tools.builtins[1]", 2)],
      "tools.builtins",
      ["shell"],
    ],
    [
      "unknown kind reported once and omitted",
      "name: T\ntools: {builtins: [shell, nope, nope, mcp]}",
      [warn("tools.builtins[1]"), warn("tools.builtins[3]")],
      "tools.builtins",
      ["shell"],
    ],
    [
      "repeated kinds kept once",
      "name: T\ntools: {builtins: [shell, shell]}",
      [],
      "tools.builtins",
      ["shell"],
    ],
    [
      "shell_filter unknown scalar preset",
      "name: T\ntools: {shell_filter: strict}",
      [warn("tools.shell_filter")],
      "tools.shell_filter",
      { preset: "", mode: "whitelist", commands: [], allow_redirections: true, allow_subshells: true },
    ],
    [
      "shell_filter unknown preset in a mapping",
      "name: T\ntools: {shell_filter: {preset: strict, commands: [git]}}",
      [warn("tools.shell_filter.preset")],
      ["tools.shell_filter.preset", "tools.shell_filter.commands"],
      ["", ["git"]],
    ],
    [
      "shell_filter mode unknown",
      "name: T\ntools: {shell_filter: {mode: greylist}}",
      [warn("tools.shell_filter.mode")],
      "tools.shell_filter.mode",
      "whitelist",
    ],
    [
      "shell_filter a number",
      "name: T\ntools: {shell_filter: 5}",
      [warn("tools.shell_filter")],
      "tools.shell_filter",
      undefined,
    ],
    [
      "stdio server with url",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, url: 'http://x'}]}",
      [{ code: "config_key_ignored", severity: "warning", field: "tools.mcp[0].url" }],
      "tools.mcp[0].url",
      undefined,
    ],
    [
      "http server with env",
      "name: T\ntools: {mcp: [{name: s, transport: http, url: 'http://x', env: {A: b}}]}",
      [{ code: "config_key_ignored", severity: "warning", field: "tools.mcp[0].env" }],
      "tools.mcp[0].env",
      undefined,
    ],
    ["skills not a mapping", "name: T\nskills: [x]", [warn("skills")], "skills.paths", []],
    [
      "skills.script_timeout 0",
      "name: T\nskills: {script_timeout: 0}",
      [warn("skills.script_timeout")],
      "skills.script_timeout",
      300,
    ],
    ["skills.paths a string", "name: T\nskills: {paths: x}", [warn("skills.paths")], "skills.paths", []],
    [
      "duplicate inline skill names: first wins",
      "name: T\nskills: {inline: [{name: a, description: one}, {name: a, description: two}]}",
      [warn("skills.inline[1].name")],
      ["skills.inline.length", "skills.inline[0].description"],
      [1, "one"],
    ],
    [
      "memory.files a string",
      "name: T\nmemory: {files: AGENTS.md}",
      [warn("memory.files")],
      "memory.files",
      [],
    ],
    [
      "last_words_max_output_tokens a string",
      "name: T\ncompaction: {last_words_max_output_tokens: many}",
      [warn("compaction.last_words_max_output_tokens")],
      "compaction.last_words_max_output_tokens",
      20000,
    ],
    [
      "obsolete compaction key",
      "name: T\ncompaction: {compaction_target_pct: 0.5}",
      [{ code: "config_key_ignored", severity: "warning", field: "compaction.compaction_target_pct" }],
      "compaction.enabled",
      true,
    ],
    [
      "reserved_context_pct >= 1 turns compaction off",
      "name: T\ncompaction: {reserved_context_pct: 1}",
      [{ code: "config_key_ignored", severity: "warning", field: "compaction.reserved_context_pct" }],
      "compaction.enabled",
      false,
    ],
    [
      "max_total_concurrency 0 is kept with a warning",
      "name: T\nsub_agents: {max_total_concurrency: 0}",
      [warn("sub_agents.max_total_concurrency")],
      "sub_agents.max_total_concurrency",
      0,
    ],
    [
      "max_concurrency -1 is kept with a warning",
      "name: T\nsub_agents: {agents: [{profile: Explore, max_concurrency: -1}]}",
      [warn("sub_agents.agents[0].max_concurrency")],
      "sub_agents.agents[0].max_concurrency",
      -1,
    ],
    [
      "max_total_concurrency a string",
      "name: T\nsub_agents: {max_total_concurrency: x}",
      [warn("sub_agents.max_total_concurrency")],
      "sub_agents.max_total_concurrency",
      3,
    ],
    [
      "sub-agent entry without profile",
      "name: T\nsub_agents: {agents: [{tool_name: x}]}",
      [warn("sub_agents.agents[0].profile")],
      "sub_agents.agents",
      [],
    ],
    [
      "sub-agent calling itself",
      "name: T\nsub_agents: {agents: [{profile: T}]}",
      [warn("sub_agents.agents[0].profile")],
      "sub_agents.agents",
      [],
    ],
    [
      "sub-agent listed twice",
      "name: T\nsub_agents: {agents: [{profile: A}, {profile: A, tool_name: b}]}",
      [warn("sub_agents.agents[1].profile")],
      "sub_agents.agents.length",
      1,
    ],
    [
      "sub-agent tool_name invalid falls back to the name",
      "name: T\nsub_agents: {agents: [{profile: A, tool_name: bad-name}]}",
      [warn("sub_agents.agents[0].tool_name")],
      "sub_agents.agents[0].tool_name",
      undefined,
    ],
    [
      "sub-agent tool names not unique",
      "name: T\nsub_agents: {agents: [{profile: A, tool_name: x}, {profile: B, tool_name: x}]}",
      [warn("sub_agents.agents[1].tool_name")],
      "sub_agents.agents.length",
      1,
    ],
    [
      "sub-agent default tool name clashes with a tool_name",
      "name: T\nsub_agents: {agents: [{profile: A, tool_name: B}, {profile: B}]}",
      [warn("sub_agents.agents[1].tool_name")],
      "sub_agents.agents.length",
      1,
    ],
    [
      "acp handshake timeout 0",
      "name: T\nacp: {handshake_timeout_seconds: 0}",
      [warn("acp.handshake_timeout_seconds")],
      "acp.handshake_timeout_seconds",
      30,
    ],
    [
      "acp handshake timeout negative",
      "name: T\nacp: {handshake_timeout_seconds: -1}",
      [warn("acp.handshake_timeout_seconds")],
      "acp.handshake_timeout_seconds",
      30,
    ],
    [
      "acp handshake timeout a boolean",
      "name: T\nacp: {handshake_timeout_seconds: true}",
      [warn("acp.handshake_timeout_seconds")],
      "acp.handshake_timeout_seconds",
      30,
    ],
    [
      "acp handshake timeout infinite",
      "name: T\nacp: {handshake_timeout_seconds: .inf}",
      [warn("acp.handshake_timeout_seconds")],
      "acp.handshake_timeout_seconds",
      30,
    ],
    [
      "acp handshake timeout a string",
      "name: T\nacp: {handshake_timeout_seconds: '60'}",
      [warn("acp.handshake_timeout_seconds")],
      "acp.handshake_timeout_seconds",
      30,
    ],
    [
      "acp idle timeout negative",
      "name: T\nacp: {idle_timeout_seconds: -1}",
      [warn("acp.idle_timeout_seconds")],
      "acp.idle_timeout_seconds",
      600,
    ],
    [
      "acp idle timeout 0 means no limit",
      "name: T\nacp: {idle_timeout_seconds: 0}",
      [],
      "acp.idle_timeout_seconds",
      0,
    ],
    [
      "unknown top-level key",
      "name: T\ncolour: red",
      [{ code: "config_unknown_key", severity: "warning", field: "colour", line: 2 }],
    ],
    [
      "unknown nested key",
      "name: T\ntools: {builtin: [shell]}",
      [{ code: "config_unknown_key", severity: "warning", field: "tools.builtin" }],
    ],
    [
      "unknown key in an mcp entry",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, cmd: x}]}",
      [{ code: "config_unknown_key", severity: "warning", field: "tools.mcp[0].cmd" }],
    ],
    [
      "an empty value counts as not written",
      "name: T\ndescription:\nsub_agent_only:",
      [],
      ["description", "sub_agent_only"],
      ["", false],
    ],
  ])("%s", (_title, yaml, expected, pick, value) => {
    const r = expectProblems(yaml, expected);
    expect(r.loaded).toBe(true);
    if (pick !== undefined) expect(at(r.settings, pick)).toEqual(value);
  });
});

describe("ACP profiles (section 2.8)", () => {
  it("reset the native sections with one warning per section set, and are sub-agent-only", () => {
    const yaml = [
      "name: Ext",
      "sub_agent_only: false",
      "instructions: x",
      "model: {profile_id: abc}",
      "tools: {builtins: [shell], mcp: [{name: bad}]}",
      "skills: {paths: [x]}",
      "memory: {files: [a.md]}",
      "compaction: {last_words_template: 5}",
      "approval: {default: nonsense}",
      "sub_agents: {max_total_concurrency: 2, agents: [{profile: Explore}]}",
      "acp: {command: agent}",
    ].join("\n");
    const r = read(yaml);
    expect(r.loaded).toBe(true);
    expect(r.brief.map((p) => [p.code, p.field, p.line])).toEqual([
      ["profile_acp_section_reset", "instructions", 3],
      ["profile_acp_section_reset", "tools", 5],
      ["profile_acp_section_reset", "skills", 6],
      ["profile_acp_section_reset", "memory", 7],
      ["profile_acp_section_reset", "compaction", 8],
      ["profile_acp_section_reset", "approval", 9],
      ["config_key_ignored", "sub_agent_only", 2],
      ["profile_acp_section_reset", "model.profile_id", 4],
      ["profile_acp_section_reset", "sub_agents.agents", 10],
    ]);
    const s = r.settings!;
    expect(s.sub_agent_only).toBe(true);
    expect(s.instructions).toBe("");
    expect(s.model.profile_id).toBe("");
    expect(s.tools).toEqual({ builtins: [], mcp: [] });
    expect(s.sub_agents).toEqual({ max_total_concurrency: 2, agents: [] });
    expect(s.acp?.command).toBe("agent");
  });

  it("says nothing about sections left at their defaults", () => {
    expect(read("name: Ext\nmodel: {}\nacp: {command: a}").problems).toEqual([]);
  });
});

describe("lines and fields", () => {
  it("gives the 1-based line of the offending key in nested lists", () => {
    const yaml = [
      "name: T",
      "tools:",
      "  mcp:",
      "    - name: a",
      "      transport: stdio",
      "      command: x",
      "    - name: b",
      "      transport: http",
      "      url: nope",
    ].join("\n");
    expect(read(yaml).brief).toEqual([
      { code: "config_field_invalid", severity: "error", field: "tools.mcp[1].url", line: 9 },
    ]);
  });

  it("keeps dotted override keys whole in the field path", () => {
    const r = read("name: T\napproval:\n  overrides:\n    filesystem.write: nope\n");
    expect(r.brief).toEqual([
      {
        code: "config_field_invalid",
        severity: "error",
        field: "approval.overrides.filesystem.write",
        line: 4,
      },
    ]);
  });
});

describe("templates where they are not resolved", () => {
  it.each([
    [
      "an MCP command",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: '{{BIN}}'}]}",
      "tools.mcp[0].command",
    ],
    [
      "MCP args",
      "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, args: ['--key={{K}}']}]}",
      "tools.mcp[0].args",
    ],
    [
      "an MCP url",
      "name: T\ntools: {mcp: [{name: s, transport: http, url: 'https://{{HOST}}/mcp'}]}",
      "tools.mcp[0].url",
    ],
    ["acp.model_id", "name: T\nacp: {model_id: '{{MODEL}}'}", "acp.model_id"],
  ])("warn in %s", (_t, yaml, field) => {
    const r = read(yaml);
    expect(r.loaded).toBe(true);
    expect(r.brief.map((p) => [p.code, p.field])).toEqual([["config_template_literal", field]]);
  });

  it("stay silent where templates are resolved", () => {
    expect(
      read(
        "name: T\ntools: {mcp: [{name: s, transport: stdio, command: c, env: {K: '{{K}}'}}]}\nacp:",
      ).problems.filter((p) => p.code === "config_template_literal"),
    ).toEqual([]);
    expect(
      read("name: T\nacp: {command: '{{BIN}}', args: ['{{A}}'], env: {K: '{{K}}'}, cwd: '{{D}}'}").problems,
    ).toEqual([]);
  });
});
