import { createHash } from "node:crypto";
import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { canonicalJson, folderDigest, jsonDigest, sha256Hex } from "./digest";

describe("canonicalJson", () => {
  it("sorts keys at every level and writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [true, null], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[true,null]},"b":1}',
    );
  });

  it("sorts keys by code point, as Python's sort_keys does", () => {
    // U+FF5E sorts before U+1F600 by code point, but after it by UTF-16 code unit.
    expect(canonicalJson({ "😀": 1, "～": 2, a: 3 })).toBe('{"a":3,"～":2,"😀":1}');
  });

  it("keeps non-ASCII text as UTF-8 and escapes control characters", () => {
    expect(canonicalJson(["é", "\n", "\u0001"])).toBe('["é","\\n","\\u0001"]');
  });

  it("writes -0 as 0 and keeps integers and fractions", () => {
    expect(canonicalJson([-0, 1, 1.5, 1e21])).toBe("[0,1,1.5,1e+21]");
  });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["undefined", undefined],
    ["a function", () => 1],
    ["a bigint", 1n],
    ["a Date", new Date(0)],
    ["a Map", new Map()],
  ])("refuses %s with code not_canonical_json", (_name, value) => {
    let thrown: unknown;
    try {
      canonicalJson({ nested: [value] });
    } catch (error) {
      thrown = error;
    }
    expect(isWorkflowError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: "not_canonical_json" });
    expect((thrown as Error).message).toContain("$.nested[0]");
  });

  it("refuses cycles but accepts the same object twice", () => {
    const shared = { x: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"x":1},{"x":1}]');
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/refers to itself/);
  });

  it("accepts objects without a prototype", () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare["k"] = "v";
    expect(canonicalJson(bare)).toBe('{"k":"v"}');
  });
});

describe("digests", () => {
  it("sha256Hex hashes bytes and the UTF-8 of strings", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("é")).toBe(sha256Hex(Buffer.from("é", "utf8")));
  });

  it("jsonDigest is the SHA-256 of the canonical JSON", () => {
    expect(jsonDigest({ b: 1, a: 2 })).toBe(createHash("sha256").update('{"a":2,"b":1}').digest("hex"));
  });

  it("folderDigest matches the value Python computes (docs/discovery.md's test vector)", () => {
    // hashlib.sha256(json.dumps(sorted(pairs), separators=(",", ":"), ensure_ascii=False).encode())
    const files = [
      { relPath: "steps.py", sha256: sha256Hex("X = 1\n") },
      { relPath: "review.py", sha256: sha256Hex("print(1)\n") },
    ];
    expect(folderDigest(files)).toBe("0af15bf429887d4aecc89aa089c47ac0364ca1b01d3d3bcfec960b0c0c591ae3");
  });

  it("folderDigest hashes the sorted [path, sha256] pairs as canonical JSON", () => {
    const a = sha256Hex("A");
    const b = sha256Hex("B");
    const expected = sha256Hex(`[["pkg.py","${a}"],["sub/x.py","${b}"]]`);
    expect(
      folderDigest([
        { relPath: "sub/x.py", sha256: b },
        { relPath: "pkg.py", sha256: a },
      ]),
    ).toBe(expected);
    // Order of the input does not matter; a changed path or content does.
    expect(
      folderDigest([
        { relPath: "pkg.py", sha256: a },
        { relPath: "sub/x.py", sha256: b },
      ]),
    ).toBe(expected);
    expect(
      folderDigest([
        { relPath: "pkg.py", sha256: a },
        { relPath: "sub/y.py", sha256: b },
      ]),
    ).not.toBe(expected);
    expect(
      folderDigest([
        { relPath: "pkg.py", sha256: b },
        { relPath: "sub/x.py", sha256: b },
      ]),
    ).not.toBe(expected);
  });
});
