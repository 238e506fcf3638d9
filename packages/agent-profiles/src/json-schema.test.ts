import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentProfileJsonSchema, modelProfileJsonSchema, settingsJsonSchema } from "./json-schema";

const schemas = new URL("../schemas/", import.meta.url);
const text = (schema: unknown) => `${biomeJson(schema, "", 0)}\n`;

/** JSON laid out as biome (line width 110) lays it out, so the committed files pass `biome check`. */
function biomeJson(value: unknown, indent: string, used: number): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const scalars = value.every((v) => v === null || typeof v !== "object");
    const line = `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
    if (scalars && indent.length + used + line.length + 1 <= 110) return line;
    const next = `${indent}  `;
    return `[\n${value.map((v) => next + biomeJson(v, next, 0)).join(",\n")}\n${indent}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const next = `${indent}  `;
    const body = entries.map(
      ([k, v]) => `${next}${JSON.stringify(k)}: ${biomeJson(v, next, JSON.stringify(k).length + 2)}`,
    );
    return `{\n${body.join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

describe("JSON Schemas for editors", () => {
  it("agent-profile.schema.json is current", async () => {
    await expect(text(agentProfileJsonSchema())).toMatchFileSnapshot(
      new URL("agent-profile.schema.json", schemas).pathname,
    );
  });

  it("models.schema.json is current", async () => {
    await expect(text(modelProfileJsonSchema())).toMatchFileSnapshot(
      new URL("models.schema.json", schemas).pathname,
    );
  });

  it("settings.schema.json is current", async () => {
    await expect(text(settingsJsonSchema())).toMatchFileSnapshot(
      new URL("settings.schema.json", schemas).pathname,
    );
  });

  it("describes the input a user writes: name required, defaults shown, unknown keys flagged", () => {
    const s = agentProfileJsonSchema() as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { default?: unknown }>;
    };
    expect(s.required).toEqual(["name"]);
    expect(s.additionalProperties).toBe(false);
    expect(s.properties["sub_agent_only"]?.default).toBe(false);
    expect(Object.keys(s.properties)).toEqual([
      "name",
      "id",
      "display_name",
      "description",
      "sub_agent_only",
      "instructions",
      "model",
      "tools",
      "approval",
      "skills",
      "memory",
      "compaction",
      "sub_agents",
      "acp",
      "metadata",
    ]);
    const m = modelProfileJsonSchema() as {
      required: string[];
      properties: Record<string, { enum?: unknown; default?: unknown }>;
    };
    expect(m.required).toEqual(["name"]);
    expect(m.properties["provider"]).toMatchObject({
      enum: ["openai", "anthropic", "deepseek-openai", "glm-openai"],
      default: "openai",
    });
  });

  it("accepts the worked examples of section 6", () => {
    const validate = (schema: Record<string, unknown>, value: unknown) =>
      z.fromJSONSchema(schema).safeParse(value).success;
    expect(
      validate(agentProfileJsonSchema(), {
        name: "Reviewer",
        tools: { builtins: ["shell"], shell_filter: "read_only" },
        approval: { default: "auto", overrides: { shell: "require" } },
      }),
    ).toBe(true);
    expect(
      validate(agentProfileJsonSchema(), {
        name: "ExternalReviewer",
        acp: { command: "some-acp-agent", args: ["--acp"], env: { K: "{{K}}" }, result_mode: "last_segment" },
      }),
    ).toBe(true);
    expect(validate(agentProfileJsonSchema(), { name: "X", colour: "red" })).toBe(false);
    expect(
      validate(modelProfileJsonSchema(), {
        id: "3f9c2a71b0de",
        name: "Local Qwen",
        model_id: "q",
        chat_options: '{"temperature": 0.2}',
      }),
    ).toBe(true);
  });
});
