import { describe, expect, test } from "vitest";
import { LineSplitter } from "./framing";

const b = (text: string) => Buffer.from(text, "utf8");

describe("LineSplitter", () => {
  test("splits lines across chunks, including a multi-byte character cut in two", () => {
    const splitter = new LineSplitter(1024);
    const bytes = b('{"a":"é"}\n{"b":1}\n{"c"');
    expect(splitter.push(bytes.subarray(0, 7))).toEqual([]);
    expect(splitter.push(bytes.subarray(7))).toEqual([{ line: '{"a":"é"}' }, { line: '{"b":1}' }]);
    expect(splitter.push(b(":2}\n"))).toEqual([{ line: '{"c":2}' }]);
  });

  test("skips a line over the limit, reports its first bytes, and goes on with the next line", () => {
    const splitter = new LineSplitter(16);
    expect(splitter.push(b('{"type":"result","id":7,'))).toEqual([]);
    expect(splitter.push(b('"more":"x"}\n{"ok":1}\n'))).toEqual([
      { oversized: '{"type":"result","id":7,' },
      { line: '{"ok":1}' },
    ]);
  });

  test("a line over the limit within one chunk is skipped as well", () => {
    const splitter = new LineSplitter(8);
    expect(splitter.push(b("0123456789\nabc\n"))).toEqual([{ oversized: "0123456789" }, { line: "abc" }]);
  });

  test("the limit counts the newline: a line of exactly limit - 1 bytes passes", () => {
    const splitter = new LineSplitter(8);
    expect(splitter.push(b("1234567\n12345678\n"))).toEqual([{ line: "1234567" }, { oversized: "12345678" }]);
  });
});
