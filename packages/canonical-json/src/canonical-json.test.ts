import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json";

/** The definition the fast path must agree with: sort every object's keys by code point, recursively. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort((a, b) => {
        const x = [...a].map((c) => c.codePointAt(0)!);
        const y = [...b].map((c) => c.codePointAt(0)!);
        for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
        return x.length - y.length;
      });
    return `{${keys.map((key) => `${JSON.stringify(key)}:${reference(record[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** A small deterministic generator of JSON-like values with awkward keys. */
function randomValue(seed: number): unknown {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const keys = ["a", "b", "z", "10", "9", "0", "01", "é", "\uFFFD", "\u{1F600}", "A", "", "ab", "a\u0000"];
  const gen = (depth: number): unknown => {
    const kind = next(depth > 3 ? 4 : 7);
    if (kind === 0) return next(2) === 0 ? -0 : next(1000) / 7;
    if (kind === 1) return keys[next(keys.length)];
    if (kind === 2) return next(2) === 0;
    if (kind === 3) return null;
    if (kind === 4) return Array.from({ length: next(4) }, () => gen(depth + 1));
    const object: Record<string, unknown> = {};
    for (let i = next(6); i > 0; i--)
      object[keys[next(keys.length)]!] = next(5) === 0 ? undefined : gen(depth + 1);
    return object;
  };
  return gen(0);
}

describe("canonicalJson", () => {
  it("sorts keys at every level, writes compact UTF-8 and leaves out undefined members", () => {
    expect(canonicalJson({ b: [1, "é", { z: 1, a: null }], a: true, u: undefined })).toBe(
      '{"a":true,"b":[1,"é",{"a":null,"z":1}]}',
    );
  });

  it("orders keys by code point, not UTF-16 unit (astral after U+FFFD)", () => {
    expect(canonicalJson({ "\u{1F600}": 1, "\uFFFD": 2, a: 3 })).toBe('{"a":3,"\uFFFD":2,"\u{1F600}":1}');
  });

  it("orders array-index keys as text, although JavaScript enumerates them first and numerically", () => {
    expect(canonicalJson({ b: 1, 10: 2, 9: 3 })).toBe('{"10":2,"9":3,"b":1}');
    expect(canonicalJson({ nested: [{ 2: "x", 10: "y" }] })).toBe('{"nested":[{"10":"y","2":"x"}]}');
  });

  it("writes -0 as 0 and leaves already canonical values as JSON.stringify writes them", () => {
    expect(canonicalJson({ n: -0 })).toBe('{"n":0}');
    const ordered = { a: [1, { b: "x", c: null }], d: "\u2028" };
    expect(canonicalJson(ordered)).toBe(JSON.stringify(ordered));
  });

  it("agrees with the definition on 2,000 generated values", () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const value = randomValue(seed);
      if (value === undefined) continue;
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });

  it("handles nesting deeper than the fast path allows", () => {
    let deep: unknown = { z: 1, a: 2 };
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(canonicalJson(deep)).toBe(`${"[".repeat(1000)}{"a":2,"z":1}${"]".repeat(1000)}`);
  });

  it.each([
    ["NaN", Number.NaN, "$ is NaN"],
    ["an infinity in an object", { x: Number.POSITIVE_INFINITY }, "$.x is Infinity"],
    ["a bigint in an array", [1n], "$[0] is a bigint"],
    ["a date", { d: new Date(0) }, "$.d is a Date"],
    ["a function member", { f: () => 1 }, "$.f is a function"],
    ["undefined in an array", [1, undefined], "$[1] is a undefined"],
    ["undefined", undefined, "$ is a undefined"],
    ["a symbol", { s: Symbol("x") }, "$.s is a symbol"],
  ])("rejects %s with code not_canonical_json and its path", (_name, value, found) => {
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
