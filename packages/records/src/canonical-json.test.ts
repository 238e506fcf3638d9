import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json";

describe("canonicalJson", () => {
  it("sorts keys at every level, writes compact UTF-8 and leaves out undefined members", () => {
    expect(canonicalJson({ b: [1, "é", { z: 1, a: null }], a: true, u: undefined })).toBe(
      '{"a":true,"b":[1,"é",{"a":null,"z":1}]}',
    );
  });

  it("orders keys by code point, not UTF-16 unit (astral after U+FFFD)", () => {
    expect(canonicalJson({ "\u{1F600}": 1, "\uFFFD": 2, a: 3 })).toBe('{"a":3,"\uFFFD":2,"\u{1F600}":1}');
  });

  it.each([
    [Number.NaN, "is NaN"],
    [{ x: Number.POSITIVE_INFINITY }, "$.x is Infinity"],
    [[1n], "$[0] is a bigint"],
    [{ d: new Date(0) }, "$.d is a Date"],
  ])("rejects %s", (value, found) => {
    expect(() => canonicalJson(value)).toThrow(expect.objectContaining({ code: "not_canonical_json" }));
    expect(() => canonicalJson(value)).toThrow(found);
  });

  it("rejects cycles but accepts shared subtrees", () => {
    const shared = { k: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"k":1},"b":{"k":1}}');
    const loop: Record<string, unknown> = {};
    loop["self"] = loop;
    expect(() => canonicalJson(loop)).toThrow("refers to itself");
  });
});
