import { describe, expect, it } from "vitest";
import { at } from "../../test/fixtures";
import { unusableReason } from "../load-models";
import { PROVIDERS } from "../schema/model-profile";
import { readModelProfile } from "./model-profile";

function read(yaml: string, stem = "m1") {
  const r = readModelProfile(yaml, "/config/models/m1.yaml", stem);
  return { ...r, brief: r.problems.map((p) => [p.code, p.severity, p.field]) };
}

describe("model profile fields and defaults (4.1)", () => {
  it("fills every default; the id is the file name", () => {
    const r = read("name: Local\n");
    expect(r.problems).toEqual([]);
    expect(r.settings).toEqual({
      id: "m1",
      name: "Local",
      provider: "openai",
      api_style: "chat_completions",
      model_id: "",
      base_url: "",
      api_key: "",
      max_context_tokens: 200000,
      max_output_tokens: 32000,
      http_connect_timeout: 10,
      http_read_timeout: 300,
      http_max_retries: 2,
      verify_ssl: true,
      bypass_proxy: false,
      http_headers: {},
      chat_options: {},
      stream: true,
      vision: false,
      stream_requires_finish_reason: false,
    });
  });

  it("reads the worked example of section 6", () => {
    const r = read(
      [
        "id: 3f9c2a71b0de",
        "name: Local Qwen",
        "provider: openai",
        "api_style: chat_completions",
        "model_id: qwen3-coder",
        "base_url: http://127.0.0.1:8000/v1",
        'api_key: "{{LOCAL_LLM_KEY}}"',
        "max_context_tokens: 131072",
        "max_output_tokens: 16384",
        `chat_options: '{"temperature": 0.2}'`,
      ].join("\n"),
    );
    expect(r.problems).toEqual([]);
    expect(r.settings).toMatchObject({
      id: "3f9c2a71b0de",
      api_key: "{{LOCAL_LLM_KEY}}",
      chat_options: { temperature: 0.2 },
      max_context_tokens: 131072,
    });
  });

  it.each<[string, string, unknown[][]]>([
    ["not YAML", "name: [", [["config_not_yaml", "error", null]]],
    ["not a mapping", "- a", [["config_not_mapping", "error", null]]],
    ["no name", "model_id: x", [["config_field_invalid", "error", "name"]]],
    ["name not a string", "name: [a]", [["config_field_invalid", "error", "name"]]],
    ["id a number", "name: a\nid: 123", [["config_field_invalid", "error", "id"]]],
    [
      "max_context_tokens a string",
      "name: a\nmax_context_tokens: lots",
      [["config_field_invalid", "error", "max_context_tokens"]],
    ],
    [
      "max_context_tokens a boolean",
      "name: a\nmax_context_tokens: true",
      [["config_field_invalid", "error", "max_context_tokens"]],
    ],
    [
      "max_output_tokens a fraction",
      "name: a\nmax_output_tokens: 1.5",
      [["config_field_invalid", "error", "max_output_tokens"]],
    ],
    [
      "http_max_retries a boolean",
      "name: a\nhttp_max_retries: false",
      [["config_field_invalid", "error", "http_max_retries"]],
    ],
    [
      "http_read_timeout a string",
      "name: a\nhttp_read_timeout: slow",
      [["config_field_invalid", "error", "http_read_timeout"]],
    ],
    [
      "api_key and api_key_env both",
      "name: a\napi_key: k\napi_key_env: KEY",
      [["config_field_invalid", "error", "api_key_env"]],
    ],
    [
      "api_key_env not a variable name",
      "name: a\napi_key_env: 1KEY",
      [["config_field_invalid", "error", "api_key_env"]],
    ],
  ])("%s is skipped", (_t, yaml, expected) => {
    const r = read(yaml);
    expect(r.settings).toBeNull();
    expect(r.brief).toEqual(expected);
  });

  it.each<[string, string, unknown[][], string | string[], unknown]>([
    [
      "max_context_tokens below 100",
      "name: a\nmax_context_tokens: 99",
      [["config_field_invalid", "warning", "max_context_tokens"]],
      "max_context_tokens",
      200000,
    ],
    [
      "max_output_tokens not positive",
      "name: a\nmax_output_tokens: 0",
      [["config_field_invalid", "warning", "max_output_tokens"]],
      "max_output_tokens",
      32000,
    ],
    [
      "http_max_retries negative",
      "name: a\nhttp_max_retries: -1",
      [["config_field_invalid", "warning", "http_max_retries"]],
      "http_max_retries",
      2,
    ],
    [
      "api_style unknown",
      "name: a\napi_style: completions",
      [["config_field_invalid", "warning", "api_style"]],
      "api_style",
      "chat_completions",
    ],
    [
      "responses on a chat-only provider",
      "name: a\nprovider: anthropic\napi_style: responses",
      [["config_field_invalid", "warning", "api_style"]],
      "api_style",
      "chat_completions",
    ],
    [
      "responses on deepseek-openai",
      "name: a\nprovider: deepseek-openai\napi_style: responses",
      [],
      "api_style",
      "responses",
    ],
    [
      "http_headers not JSON object text",
      "name: a\nhttp_headers: '[1]'",
      [["config_field_invalid", "warning", "http_headers"]],
      "http_headers",
      {},
    ],
    [
      "http_headers as a mapping",
      "name: a\nhttp_headers: {X-Key: '{{K}}'}",
      [],
      "http_headers",
      { "X-Key": "{{K}}" },
    ],
    [
      "http_headers value not a string",
      "name: a\nhttp_headers: {X-N: 1, X-S: s}",
      [["config_field_invalid", "warning", "http_headers.X-N"]],
      "http_headers",
      { "X-S": "s" },
    ],
    [
      "chat_options not JSON",
      "name: a\nchat_options: 'temperature=1'",
      [["config_field_invalid", "warning", "chat_options"]],
      "chat_options",
      {},
    ],
    [
      "chat_options max_tokens moves into max_output_tokens",
      `name: a\nchat_options: '{"max_tokens": 4096, "temperature": 0}'`,
      [],
      ["max_output_tokens", "chat_options"],
      [4096, { temperature: 0 }],
    ],
    [
      "max_completion_tokens moves too",
      "name: a\nchat_options: {max_completion_tokens: 1000}",
      [],
      "max_output_tokens",
      1000,
    ],
    [
      "the field wins over chat_options",
      "name: a\nmax_output_tokens: 500\nchat_options: {max_tokens: 1000}",
      [["config_key_ignored", "warning", "chat_options.max_tokens"]],
      "max_output_tokens",
      500,
    ],
    [
      "stream not allowed in chat_options",
      "name: a\nchat_options: {stream: false, top_p: 1}",
      [["config_field_invalid", "warning", "chat_options.stream"]],
      "chat_options",
      { top_p: 1 },
    ],
    [
      "messages not allowed in chat_options",
      "name: a\nchat_options: {messages: []}",
      [["config_field_invalid", "warning", "chat_options.messages"]],
      "chat_options",
      {},
    ],
    [
      "n other than 1 with Chat Completions",
      "name: a\nchat_options: {n: 2}",
      [["config_field_invalid", "warning", "chat_options.n"]],
      "chat_options",
      {},
    ],
    ["n 1 is fine", "name: a\nchat_options: {n: 1}", [], "chat_options", { n: 1 }],
    [
      "api_key_env is short for a {{NAME}} api_key",
      "name: a\napi_key_env: OPENAI_KEY",
      [],
      "api_key",
      "{{OPENAI_KEY}}",
    ],
    ["an unknown provider loads", "name: a\nprovider: gemini", [], "provider", "gemini"],
    [
      "unknown key",
      "name: a\ntemperature: 1",
      [["config_unknown_key", "warning", "temperature"]],
      "name",
      "a",
    ],
  ])("%s", (_t, yaml, expected, pick, value) => {
    const r = read(yaml);
    expect(r.settings).not.toBeNull();
    expect(r.brief).toEqual(expected);
    expect(at(r.settings, pick)).toEqual(value);
  });
});

describe("providers (4.2) and usability", () => {
  it.each([
    ["openai", "https://api.openai.com/v1"],
    ["anthropic", "https://api.anthropic.com"],
    ["deepseek-openai", "https://api.deepseek.com"],
    ["glm-openai", "https://open.bigmodel.cn/api/paas/v4"],
  ] as const)("%s defaults to %s", (provider, url) => {
    expect(PROVIDERS[provider].baseUrl).toBe(url);
  });

  const usable = (yaml: string) => {
    const s = read(yaml).settings!;
    return unusableReason(s);
  };
  it.each([
    ["a complete profile", "name: a\nmodel_id: m", null],
    ["no model_id", "name: a", "model_id is not set"],
    ["empty name", "name: ''\nmodel_id: m", "its name is empty"],
    ["empty id", "name: a\nid: ''\nmodel_id: m", "its id is empty"],
    [
      "unknown provider",
      "name: a\nprovider: gemini\nmodel_id: m",
      'provider "gemini" is not one of openai, anthropic, deepseek-openai, glm-openai',
    ],
    [
      "base_url without a scheme",
      "name: a\nmodel_id: m\nbase_url: localhost:8000",
      'base_url "localhost:8000" does not start with http:// or https://',
    ],
  ])("%s", (_t, yaml, reason) => {
    expect(usable(yaml)).toBe(reason);
  });
});

describe("templates in model profiles", () => {
  it("warn in base_url and model_id, not in api_key", () => {
    expect(
      read("name: a\nbase_url: 'https://{{HOST}}/v1'\nmodel_id: '{{M}}'\napi_key: '{{KEY}}'").brief,
    ).toEqual([
      ["config_template_literal", "warning", "base_url"],
      ["config_template_literal", "warning", "model_id"],
    ]);
  });
});
