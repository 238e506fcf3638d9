import { describe, expect, it } from "vitest";
import { parseHandoffFromText } from "./handoff-text";

describe("parseHandoffFromText (the fallback for agents without submit_handoff)", () => {
  it.each([
    ['Done.\n```json\n{"summary": "fixed"}\n```\n', { summary: "fixed" }, "fenced_block"],
    [
      '```json\n{"summary": "first"}\n```\nthen\n```JSON\n{"summary": "last"}\n```',
      { summary: "last" },
      "fenced_block",
    ],
    // A fenced block that is not an object does not count; an earlier valid one does.
    ['```json\n{"summary": "kept"}\n```\n```json\n[1, 2]\n```', { summary: "kept" }, "fenced_block"],
    ['~~~json\n{"summary": "tilde"}\n~~~', { summary: "tilde" }, "fenced_block"],
    // Without a json fence: the last top-level object of the text.
    [
      'I considered {"summary": "draft"} but in the end: {"summary": "final", "notes": "a } in a string"}',
      { summary: "final", notes: "a } in a string" },
      "json_object",
    ],
    [
      'Result: {"summary": "outer", "nested": {"summary": "inner"}}',
      { summary: "outer", nested: { summary: "inner" } },
      "json_object",
    ],
    ['{not json} and {"summary": "after noise"}', { summary: "after noise" }, "json_object"],
    ['```\n{"summary": "plain fence"}\n```', { summary: "plain fence" }, "json_object"],
    [
      '```json\n{"summary": broken}\n```\n{"summary": "object wins over a broken fence"}',
      { summary: "object wins over a broken fence" },
      "json_object",
    ],
  ])("%j", (text, handoff, from) => {
    expect(parseHandoffFromText(text)).toEqual({ ok: true, handoff, from });
  });

  it.each(["no json here", "[1, 2, 3]", '{"summary": ', "```json\nnull\n```"])(
    "finds no handoff in %j",
    (text) => {
      const result = parseHandoffFromText(text);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain("```json");
    },
  );
});
