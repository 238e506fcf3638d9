import { describe, expect, it } from "vitest";
import { resolveTemplates, templateNames } from "./templates";

describe("{{NAME}} templates", () => {
  const env = { KEY: "k1", _X2: "x", EMPTY: "" };
  it.each<[string, unknown, unknown]>([
    ["a string", "Bearer {{KEY}}", { ok: true, value: "Bearer k1" }],
    ["several names", "{{KEY}}-{{_X2}}", { ok: true, value: "k1-x" }],
    ["a list", ["--key", "{{KEY}}"], { ok: true, value: ["--key", "k1"] }],
    ["a map", { A: "{{KEY}}", B: "plain" }, { ok: true, value: { A: "k1", B: "plain" } }],
    ["a missing variable", "{{NOPE}}", { ok: false, missing: "NOPE" }],
    ["an empty variable fails too", "x{{EMPTY}}", { ok: false, missing: "EMPTY" }],
    ["the first missing name is reported", ["{{A1}}", "{{B1}}"], { ok: false, missing: "A1" }],
    ["a name starting with a digit is literal", "{{1A}}", { ok: true, value: "{{1A}}" }],
    ["spaces make it literal", "{{ KEY }}", { ok: true, value: "{{ KEY }}" }],
    ["single braces are literal", "{KEY}", { ok: true, value: "{KEY}" }],
  ])("%s", (_t, value, expected) => {
    expect(resolveTemplates(value as string, env)).toEqual(expected);
  });

  it("lists the names used", () => {
    expect(templateNames("{{A}} {{B}} {{A}} {{1x}}")).toEqual(["A", "B"]);
  });
});
