import { describe, expect, it } from "vitest";
import { findInvalidUtf8 } from "./utf8";

const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))));

describe("findInvalidUtf8", () => {
  it("accepts ASCII, multi-byte text, the largest code point and an empty buffer", () => {
    expect(findInvalidUtf8(bytes("print('hi')\n"))).toBeNull();
    expect(findInvalidUtf8(bytes("é € 😀 \u{10ffff}"))).toBeNull();
    expect(findInvalidUtf8(new Uint8Array())).toBeNull();
  });

  it.each([
    ["a lone continuation byte", [0x80]],
    ["Latin-1 é", [0xe9, 0x74]],
    ["an overlong two-byte form", [0xc0, 0xaf]],
    ["an overlong three-byte form", [0xe0, 0x80, 0xaf]],
    ["a UTF-16 surrogate", [0xed, 0xa0, 0x80]],
    ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
    ["a truncated sequence at the end", [0xe2, 0x82]],
    ["0xFF", [0xff]],
  ])("rejects %s at its first byte", (_name, bad) => {
    const error = findInvalidUtf8(bytes("line one\nline two\nok é ", bad, " tail\n"));
    expect(error).toEqual({ offset: 24, line: 3, column: 7, byte: bad[0] });
  });
});
