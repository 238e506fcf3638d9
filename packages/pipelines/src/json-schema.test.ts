import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { pipelineJsonSchema } from "./json-schema";

const file = new URL("../schemas/pipeline.schema.json", import.meta.url).pathname;

/**
 * JSON as `biome format` lays it out (2 spaces, arrays of scalars on one line when they fit in 110
 * columns), so that the committed file passes `biome check` and the snapshot still pins it.
 */
function formatted(value: unknown, indent = "", taken = 0): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const flat = `[${value.map((item) => JSON.stringify(item)).join(", ")}]`;
    const scalars = value.every((item) => item === null || typeof item !== "object");
    if (scalars && indent.length + taken + flat.length + 1 <= 110) return flat;
    const inner = `${indent}  `;
    return `[\n${value.map((item) => inner + formatted(item, inner)).join(",\n")}\n${indent}]`;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const inner = `${indent}  `;
    const lines = entries.map(([key, item]) => {
      const head = `${JSON.stringify(key)}: `;
      return inner + head + formatted(item, inner, head.length);
    });
    return `{\n${lines.join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

describe("schemas/pipeline.schema.json", () => {
  it("is generated from the zod schema (input shape)", async () => {
    await expect(`${formatted(pipelineJsonSchema())}\n`).toMatchFileSnapshot(file);
  });

  it("holds the reference's fields, defaults and limits", async () => {
    const schema = JSON.parse(await readFile(file, "utf8"));
    expect(schema.required).toEqual(["name", "nodes"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.nodes).toMatchObject({ minItems: 1, maxItems: 200 });
    expect(schema.properties.failure_policy).toMatchObject({
      default: "pause",
      enum: ["pause", "fail_fast", "continue"],
    });
    expect(schema.properties.auto_supervise.default).toBe(true);
    const node = schema.properties.nodes.items;
    expect(node.required).toEqual(["id", "name", "prompt_template"]);
    expect(node.properties.runtime).toMatchObject({
      default: "auto",
      enum: ["auto", "claude-code", "codex", "opencode", "kimi-code"],
    });
    expect(node.properties.depends_on.default).toEqual([]);
    expect(node.properties.requires_approval.default).toBe(false);
    expect(Object.keys(node.properties)).toHaveLength(16);
  });
});
