import { describe, expect, it } from "vitest";
import { checkOutputSchema, declaredFields, handoffSchemaOf, OUTPUT_SCHEMA_KEYWORDS } from "./output-schema";

const ok = (extra: Record<string, unknown>) => ({
  type: "object",
  properties: { summary: { type: "string" } },
  ...extra,
});

describe("the reference's output_schema subset", () => {
  it("supports exactly type, properties, required, items, enum and additionalProperties", () => {
    expect(OUTPUT_SCHEMA_KEYWORDS).toEqual([
      "type",
      "properties",
      "required",
      "items",
      "enum",
      "additionalProperties",
    ]);
  });

  // keyword row of the reference, a schema using it well, a schema using it badly and what is said
  it.each([
    ["type", ok({}), { type: "array" }, ["type"], 'must be {"type": "object", …}'],
    [
      "type",
      ok({ properties: { n: { type: ["integer", "null"] } } }),
      ok({ properties: { n: { type: "float" } } }),
      ["properties", "n", "type"],
      '"type" must be one of',
    ],
    [
      "properties",
      ok({ properties: { a: { type: "string" } } }),
      ok({ properties: ["a"] }),
      ["properties"],
      '"properties" must be an object of schemas',
    ],
    [
      "required",
      ok({ required: ["summary"] }),
      ok({ required: "summary" }),
      ["required"],
      '"required" must be a list',
    ],
    [
      "items",
      ok({ properties: { l: { type: "array", items: { type: "string" } } } }),
      ok({ properties: { l: { items: [{ type: "string" }] } } }),
      ["properties", "l", "items"],
      "tuple forms",
    ],
    [
      "enum",
      ok({ properties: { v: { enum: ["a", 1, null] } } }),
      ok({ properties: { v: { enum: [] } } }),
      ["properties", "v", "enum"],
      "non-empty list",
    ],
    [
      "additionalProperties",
      ok({ additionalProperties: false }),
      ok({ additionalProperties: { type: "strin" } }),
      ["additionalProperties", "type"],
      '"type" must be one of',
    ],
  ])("%s: accepted when well formed, else said where", (_keyword, good, bad, path, words) => {
    expect(checkOutputSchema(good)).toEqual([]);
    const problems = checkOutputSchema(bad);
    expect(problems.map((p) => p.path)).toContainEqual(path);
    expect(problems.map((p) => p.message).join("\n")).toContain(words);
  });

  it.each([
    [
      "minLength",
      ok({ properties: { summary: { type: "string", minLength: 1 } } }),
      ["properties", "summary", "minLength"],
    ],
    ["$ref", ok({ $ref: "#/x" }), ["$ref"]],
    ["oneOf", ok({ oneOf: [] }), ["oneOf"]],
    ["description", ok({ description: "x" }), ["description"]],
  ])("names an unsupported keyword (%s) and the subset", (keyword, schema, path) => {
    expect(checkOutputSchema(schema)).toEqual([
      {
        path,
        key: true,
        message: `keyword "${keyword}" is not supported in an output_schema; the supported subset is type, properties, required, items, enum, additionalProperties`,
      },
    ]);
  });

  it.each([
    [{ properties: {} }, []],
    [{ type: ["object"] }, ["type"]],
    [true, []],
  ])("requires the root to be an object schema: %j", (schema, path) => {
    expect(checkOutputSchema(schema)[0]?.path).toEqual(path);
  });

  it("refuses boolean sub-schemas", () => {
    expect(checkOutputSchema(ok({ properties: { a: true } }))[0]).toMatchObject({
      path: ["properties", "a"],
    });
  });

  it("lists declared fields from properties and required", () => {
    expect([...declaredFields({ type: "object", properties: { a: {} }, required: ["b"] })].sort()).toEqual([
      "a",
      "b",
    ]);
  });

  it("gives a node's handoff schema, the default for null, and refuses one outside the subset", () => {
    expect(handoffSchemaOf({ id: "a", output_schema: null }).required).toEqual(["summary"]);
    expect(handoffSchemaOf({ id: "a", output_schema: ok({}) })).toEqual(ok({}));
    expect(() => handoffSchemaOf({ id: "a", output_schema: { type: "string" } })).toThrow(
      expect.objectContaining({ code: "pipeline_definition_invalid" }),
    );
  });
});
