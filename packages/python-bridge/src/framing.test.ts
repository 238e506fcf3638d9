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

describe("LineSplitter string frames", () => {
  const frame = (ref: number, body: Buffer, keep = true, bytes = body.length) =>
    Buffer.concat([b(`{"type":"string","ref":${ref},"bytes":${bytes},"keep":${keep}}\n`), body, b("\n")]);
  /** A body with multi-byte characters, newlines and text that looks like a header inside. */
  const TEXT = 'é\n€😀\n{"type":"string","ref":9}\n';
  const STREAM = Buffer.concat([
    b('{"type":"emit","id":1,"text":"a"}\n'),
    frame(2, b(TEXT)),
    frame(4, b("once"), false),
    b('{"type":"result","id":1}\n'),
  ]);
  const EXPECTED = [
    { line: '{"type":"emit","id":1,"text":"a"}' },
    { string: { ref: 2, text: TEXT, bytes: Buffer.byteLength(TEXT), keep: true } },
    { string: { ref: 4, text: "once", bytes: 4, keep: false } },
    { line: '{"type":"result","id":1}' },
  ];

  test("a frame comes out whole, in order with the lines around it", () => {
    expect(new LineSplitter(1024).push(STREAM)).toEqual(EXPECTED);
  });

  test("split into two chunks at every byte", () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      const splitter = new LineSplitter(1024);
      const frames = [...splitter.push(STREAM.subarray(0, cut)), ...splitter.push(STREAM.subarray(cut))];
      expect(frames, `cut at ${cut}`).toEqual(EXPECTED);
    }
  });

  test("byte by byte, into chunks whose memory is reused afterwards", () => {
    const splitter = new LineSplitter(1024);
    const frames = [];
    const scratch = Buffer.alloc(1);
    for (const byte of STREAM) {
      scratch[0] = byte;
      frames.push(...splitter.push(scratch));
    }
    expect(frames).toEqual(EXPECTED);
  });

  test("a large body across many chunks", () => {
    const text = `é€😀${"x".repeat(7)}`.repeat(10_000);
    const data = Buffer.concat([frame(6, b(text)), b("{}\n")]);
    const splitter = new LineSplitter(1024 * 1024);
    const frames = [];
    for (let i = 0; i < data.length; i += 4093) frames.push(...splitter.push(data.subarray(i, i + 4093)));
    expect(frames).toEqual([{ string: { ref: 6, text, bytes: 160_000, keep: true } }, { line: "{}" }]);
  });

  test("an empty body, and a body of exactly the limit", () => {
    const splitter = new LineSplitter(64);
    const body = "0123456789abcdef".repeat(4);
    expect(splitter.push(Buffer.concat([frame(2, b("")), frame(4, b(body))]))).toEqual([
      { string: { ref: 2, text: "", bytes: 0, keep: true } },
      { string: { ref: 4, text: body, bytes: 64, keep: true } },
    ]);
  });

  test.each([
    ['{"type":"string","ref":1,"bytes":2,"keep":true', /a string frame header that is not JSON/],
    ['{"type":"string",}', /a string frame header that is not JSON/],
    ['{"type":"string","ref":0,"bytes":2,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":-2,"bytes":2,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":1.5,"bytes":2,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":"2","bytes":2,"keep":true}', /needs a positive ref/],
    ['{"type":"string","bytes":2,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":2,"bytes":-1,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":2,"bytes":2.5,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":2,"keep":true}', /needs a positive ref/],
    ['{"type":"string","ref":2,"bytes":2,"keep":"yes"}', /needs a positive ref/],
    ['{"type":"string","ref":2,"bytes":2}', /needs a positive ref/],
    ['{"type":"string","ref":2,"bytes":1025,"keep":true}', /bytes \(at most 1024\)/],
  ])("a bad header %s is reported, and the next line is read", (head, problem) => {
    const frames = new LineSplitter(1024).push(b(`${head}\n{"ok":1}\n`));
    expect(frames).toHaveLength(2);
    expect((frames[0] as { badString: string }).badString).toMatch(problem);
    expect(frames[1]).toEqual({ line: '{"ok":1}' });
  });

  test("a body that is not UTF-8 is reported, whole or cut anywhere", () => {
    const data = Buffer.concat([frame(2, Buffer.from([0x6f, 0x6b, 0xff, 0xfe])), b('{"ok":1}\n')]);
    const expected = [{ badString: "string frame 2 is not UTF-8" }, { line: '{"ok":1}' }];
    expect(new LineSplitter(1024).push(data)).toEqual(expected);
    for (let cut = 0; cut <= data.length; cut++) {
      const splitter = new LineSplitter(1024);
      expect([...splitter.push(data.subarray(0, cut)), ...splitter.push(data.subarray(cut))]).toEqual(
        expected,
      );
    }
    // A multi-byte character cut short by `bytes`.
    const short = new LineSplitter(1024).push(frame(2, b("é").subarray(0, 1)));
    expect(short).toEqual([{ badString: "string frame 2 is not UTF-8" }]);
  });

  test("a body not followed by a newline is reported", () => {
    const splitter = new LineSplitter(1024);
    expect(splitter.push(b('{"type":"string","ref":6,"bytes":2,"keep":true}\nabX'))).toEqual([
      { badString: "string frame 6 is not followed by a newline after its 2 bytes" },
    ]);
    // What follows is read as lines again.
    expect(splitter.push(b('{"ok":1}\n'))).toEqual([{ line: '{"ok":1}' }]);
    // A `bytes` shorter than the body: the rest of the body comes out as a line (which the worker refuses).
    expect(new LineSplitter(1024).push(frame(8, b("abcdef"), true, 3))).toEqual([
      { badString: "string frame 8 is not followed by a newline after its 3 bytes" },
      { line: "ef" },
    ]);
  });

  test("a frame after a skipped oversized line", () => {
    const splitter = new LineSplitter(64);
    const data = Buffer.concat([
      b(`{"type":"result","id":3,"pad":"${"p".repeat(100)}"}\n`),
      frame(2, b("s".repeat(64))),
    ]);
    const frames = splitter.push(data);
    expect(frames).toHaveLength(2);
    expect(frames[0]).toHaveProperty("oversized");
    expect(frames[1]).toEqual({ string: { ref: 2, text: "s".repeat(64), bytes: 64, keep: true } });
  });
});
