import { afterEach, describe, expect, test } from "vitest";
import { LIMITS } from "./protocol";
import { SharedStrings } from "./strings";

/** The shortest large string: 65,536 characters, as many bytes. */
const ASCII = "a".repeat(LIMITS.largeStringChars);
/** 100,000 characters of 1 to 4 bytes of UTF-8 (é, €, 😀 are 2, 3 and 4): 160,000 bytes. */
const MIXED = `é€😀${"x".repeat(7)}`.repeat(10_000);
const MIXED_BYTES = 160_000;

const header = (ref: number, bytes: number, keep: boolean) =>
  `{"type":"string","ref":${ref},"bytes":${bytes},"keep":${keep}}\n`;

function invoke(input: { text: string; data: unknown }, id = 1): Record<string, unknown> {
  return { type: "invoke", id, kind: "node", node: "n", input, timeout_ms: null };
}

const INPUT = [["input"]] as const;

/** The framed text as the worker reads it: string frames (header, body, newline), then the message line. */
function split(framed: string): {
  strings: { header: unknown; body: string }[];
  message: Record<string, unknown>;
} {
  const strings: { header: unknown; body: string }[] = [];
  let rest = framed;
  while (rest.startsWith('{"type":"string",')) {
    const end = rest.indexOf("\n");
    const head = JSON.parse(rest.slice(0, end)) as { bytes: number };
    const body = Buffer.from(rest.slice(end + 1), "utf8")
      .subarray(0, head.bytes)
      .toString("utf8");
    strings.push({ header: head, body });
    rest = rest.slice(end + 1 + body.length);
    expect(rest[0]).toBe("\n");
    rest = rest.slice(1);
  }
  expect(rest.endsWith("\n")).toBe(true);
  expect(rest.slice(0, -1)).not.toContain("\n");
  return { strings, message: JSON.parse(rest) as Record<string, unknown> };
}

const keptLimit = LIMITS.keptStringBytes;
afterEach(() => {
  (LIMITS as { keptStringBytes: number }).keptStringBytes = keptLimit;
});

describe("SharedStrings.frame", () => {
  test("a message without large strings is its JSON line", () => {
    const strings = new SharedStrings();
    const small = "s".repeat(LIMITS.largeStringChars - 1);
    const message = invoke({ text: small, data: { k: [small] } });
    expect(strings.frame(message, INPUT)).toBe(`${JSON.stringify(message)}\n`);
    expect(strings.keptBytes).toBe(0);
  });

  test("a new string is sent as a frame exactly as specified, then the message with its place blank", () => {
    const strings = new SharedStrings();
    expect(Buffer.byteLength(MIXED, "utf8")).toBe(MIXED_BYTES);
    const message = invoke({ text: "t", data: { k: [1, MIXED] } }, 7);
    const framed = strings.frame(message, INPUT);
    expect(framed).toBe(
      `${header(1, MIXED_BYTES, true)}${MIXED}\n` +
        `{"type":"invoke","id":7,"kind":"node","node":"n","input":{"text":"t","data":{"k":[1,""]}},"timeout_ms":null,` +
        `"strings":[{"ref":1,"at":["input","data","k",1]}]}\n`,
    );
    expect(strings.keptBytes).toBe(MIXED_BYTES);
    // The caller's message is untouched.
    expect(message).toEqual(invoke({ text: "t", data: { k: [1, MIXED] } }, 7));
  });

  test("refs are odd, one per distinct string; equal content later goes by ref alone", () => {
    const strings = new SharedStrings();
    const other = "b".repeat(70_000);
    const first = split(strings.frame(invoke({ text: ASCII, data: [MIXED, ASCII, other] }), INPUT)!);
    expect(first.strings.map((s) => s.header)).toEqual([
      { type: "string", ref: 1, bytes: ASCII.length, keep: true },
      { type: "string", ref: 3, bytes: MIXED_BYTES, keep: true },
      { type: "string", ref: 5, bytes: 70_000, keep: true },
    ]);
    expect(first.strings.map((s) => s.body)).toEqual([ASCII, MIXED, other]);
    expect(first.message.strings).toEqual([
      { ref: 1, at: ["input", "text"] },
      { ref: 3, at: ["input", "data", 0] },
      { ref: 1, at: ["input", "data", 1] },
      { ref: 5, at: ["input", "data", 2] },
    ]);
    expect(first.message.input).toEqual({ text: "", data: ["", "", ""] });
    // A string built anew with the same content (JavaScript strings have no identity) is known.
    const again = `${"a".repeat(100)}${"a".repeat(LIMITS.largeStringChars - 100)}`;
    const second = strings.frame(invoke({ text: "t", data: { x: again } }, 2), INPUT)!;
    expect(second).toBe(
      `{"type":"invoke","id":2,"kind":"node","node":"n","input":{"text":"t","data":{"x":""}},"timeout_ms":null,` +
        `"strings":[{"ref":1,"at":["input","data","x"]}]}\n`,
    );
    const third = split(strings.frame(invoke({ text: `${MIXED}!`, data: null }), INPUT)!);
    expect(third.strings.map((s) => (s.header as { ref: number }).ref)).toEqual([7]);
    expect(strings.keptBytes).toBe(ASCII.length + MIXED_BYTES + 70_000 + MIXED_BYTES + 1);
  });

  test("combine sources: each source's value is looked into, other fields are not", () => {
    const strings = new SharedStrings();
    const message = {
      type: "invoke",
      id: 3,
      kind: "combine",
      join: "join:y",
      sources: [
        { node_id: ASCII, activation_id: "a#1", value: { text: "small", data: null } },
        { node_id: "b", activation_id: "b#1", value: { text: MIXED, data: { k: ASCII } } },
      ],
      timeout_ms: null,
    };
    const framed = split(
      strings.frame(
        message,
        message.sources.map((_, i) => ["sources", i, "value"]),
      )!,
    );
    expect(framed.message.strings).toEqual([
      { ref: 1, at: ["sources", 1, "value", "text"] },
      { ref: 3, at: ["sources", 1, "value", "data", "k"] },
    ]);
    expect(framed.message.sources).toEqual([
      { node_id: ASCII, activation_id: "a#1", value: { text: "small", data: null } },
      { node_id: "b", activation_id: "b#1", value: { text: "", data: { k: "" } } },
    ]);
    // The receiving side puts them back.
    const worker = new SharedStrings();
    for (const { header: head, body } of framed.strings) {
      const { ref, bytes, keep } = head as { ref: number; bytes: number; keep: boolean };
      worker.receive(ref, body, bytes, keep);
    }
    expect(worker.resolve(framed.message)).toEqual({ bytes: MIXED_BYTES + ASCII.length });
    expect(framed.message).toEqual(message);
  });

  test("a __proto__ key is blanked as an own property, never the prototype", () => {
    const strings = new SharedStrings();
    const data = JSON.parse(
      `{"__proto__": ${JSON.stringify(ASCII)}, "k": {"__proto__": [${JSON.stringify(MIXED)}]}}`,
    );
    expect(Object.hasOwn(data, "__proto__")).toBe(true);
    const framed = split(strings.frame(invoke({ text: "t", data }), INPUT)!);
    expect(framed.message.strings).toEqual([
      { ref: 1, at: ["input", "data", "__proto__"] },
      { ref: 3, at: ["input", "data", "k", "__proto__", 0] },
    ]);
    expect(JSON.stringify((framed.message.input as { data: unknown }).data)).toBe(
      '{"__proto__":"","k":{"__proto__":[""]}}',
    );
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(data.k, "__proto__")?.value).toEqual([MIXED]);
    // And put back the same way.
    const worker = new SharedStrings();
    worker.receive(1, ASCII, ASCII.length, true);
    worker.receive(3, MIXED, MIXED_BYTES, true);
    expect(worker.resolve(framed.message)).toEqual({ bytes: ASCII.length + MIXED_BYTES });
    const placed = (framed.message.input as { data: Record<string, unknown> }).data;
    expect(Object.hasOwn(placed, "__proto__")).toBe(true);
    expect(JSON.stringify(placed)).toBe(JSON.stringify(data));
    expect(Object.getPrototypeOf(placed)).toBe(Object.prototype);
  });

  test("a large string with a lone surrogate stays inline in the JSON", () => {
    const strings = new SharedStrings();
    const lone = `${ASCII}\ud800`;
    const message = invoke({ text: lone, data: [`\udc00${ASCII}`, ASCII] });
    const framed = strings.frame(message, INPUT)!;
    const { strings: frames, message: parsed } = split(framed);
    expect(frames.map((s) => s.body)).toEqual([ASCII]);
    expect(parsed.strings).toEqual([{ ref: 1, at: ["input", "data", 1] }]);
    expect(parsed.input).toEqual({ text: lone, data: [`\udc00${ASCII}`, ""] });
    expect(framed).toContain("\\ud800");
    expect(framed).toContain("\\udc00");
  });

  test("over the message limit with its strings: null, and nothing is kept", () => {
    const strings = new SharedStrings();
    const big = "z".repeat(6 * 1024 * 1024);
    // 18 MiB counted: the same string in three places counts three times, though it would be sent once.
    const message = invoke({ text: big, data: [big, big] });
    expect(strings.frame(message, INPUT)).toBeNull();
    expect(strings.keptBytes).toBe(0);
    // Nothing of it is known afterwards: it travels again in a message that fits.
    const framed = split(strings.frame(invoke({ text: big, data: null }), INPUT)!);
    expect(framed.strings).toHaveLength(1);
    expect(framed.strings[0]!.body).toBe(big);
    expect(strings.keptBytes).toBe(big.length);
    // A kept string named too often still makes a message over the limit; it stays kept.
    expect(strings.frame(invoke({ text: big, data: [big, big] }), INPUT)).toBeNull();
    expect(strings.keptBytes).toBe(big.length);
  });

  test("a message of exactly the limit with its strings is sent", () => {
    const strings = new SharedStrings();
    const probe = invoke({ text: "", data: null });
    (probe as { strings?: unknown }).strings = [{ ref: 1, at: ["input", "text"] }];
    const lineBytes = Buffer.byteLength(`${JSON.stringify(probe)}\n`);
    const exact = "q".repeat(LIMITS.messageBytes - lineBytes);
    expect(strings.frame(invoke({ text: exact, data: null }), INPUT)).not.toBeNull();
    const over = `${exact}q`;
    expect(new SharedStrings().frame(invoke({ text: over, data: null }), INPUT)).toBeNull();
  });

  test("past the kept limit, frames say keep: false and each message sends them again", () => {
    (LIMITS as { keptStringBytes: number }).keptStringBytes = ASCII.length + 1000;
    const strings = new SharedStrings();
    strings.receive(2, "w".repeat(1000), 1000, true); // the worker's strings count toward the limit too
    const first = split(strings.frame(invoke({ text: ASCII, data: null }), INPUT)!);
    expect(first.strings.map((s) => s.header)).toEqual([
      { type: "string", ref: 1, bytes: ASCII.length, keep: true },
    ]);
    const second = strings.frame(invoke({ text: ASCII, data: [MIXED, MIXED] }), INPUT)!;
    expect(second).toBe(
      `${header(3, MIXED_BYTES, false)}${MIXED}\n` +
        `{"type":"invoke","id":1,"kind":"node","node":"n","input":{"text":"","data":["",""]},"timeout_ms":null,` +
        `"strings":[{"ref":1,"at":["input","text"]},{"ref":3,"at":["input","data",0]},{"ref":3,"at":["input","data",1]}]}\n`,
    );
    const third = split(strings.frame(invoke({ text: MIXED, data: null }), INPUT)!);
    expect(third.strings.map((s) => s.header)).toEqual([
      { type: "string", ref: 5, bytes: MIXED_BYTES, keep: false },
    ]);
    expect(strings.keptBytes).toBe(1000 + ASCII.length);
  });

  test("a string kept exactly at the limit is kept", () => {
    (LIMITS as { keptStringBytes: number }).keptStringBytes = ASCII.length;
    const strings = new SharedStrings();
    expect(
      strings.frame(invoke({ text: ASCII, data: null }), INPUT)!.startsWith(header(1, ASCII.length, true)),
    ).toBe(true);
  });
});

describe("SharedStrings.receive and resolve", () => {
  function table(): SharedStrings {
    const strings = new SharedStrings();
    strings.receive(2, ASCII, ASCII.length, true);
    strings.receive(4, MIXED, MIXED_BYTES, true);
    return strings;
  }

  function result(value: unknown, refs: unknown): Record<string, unknown> {
    return { type: "result", id: 1, ok: true, kind: "node", value, strings: refs };
  }

  test("puts strings at nested places and returns their bytes, one count per place", () => {
    const strings = table();
    const message = result({ text: "", data: { a: [1, "", { b: "" }], "": "" } }, [
      { ref: 2, at: ["value", "text"] },
      { ref: 4, at: ["value", "data", "a", 1] },
      { ref: 2, at: ["value", "data", "a", 2, "b"] },
      { ref: 4, at: ["value", "data", ""] },
    ]);
    expect(strings.resolve(message)).toEqual({ bytes: 2 * ASCII.length + 2 * MIXED_BYTES });
    expect(message).toEqual({
      type: "result",
      id: 1,
      ok: true,
      kind: "node",
      value: { text: ASCII, data: { a: [1, MIXED, { b: ASCII }], "": MIXED } },
    });
  });

  test("a message without strings is left as it is", () => {
    const strings = table();
    const message = { type: "emit", id: 1, text: "" };
    expect(strings.resolve(message)).toEqual({ bytes: 0 });
    expect(message).toEqual({ type: "emit", id: 1, text: "" });
  });

  test("a worker's kept string goes back by its even ref", () => {
    const strings = table();
    const received = result({ text: "", data: null }, [{ ref: 4, at: ["value", "text"] }]);
    strings.resolve(received);
    const framed = strings.frame(invoke((received as { value: { text: string; data: null } }).value), INPUT)!;
    expect(framed).toBe(
      `{"type":"invoke","id":1,"kind":"node","node":"n","input":{"text":"","data":null},"timeout_ms":null,` +
        `"strings":[{"ref":4,"at":["input","text"]}]}\n`,
    );
  });

  test("receiving a kept ref again replaces it and counts it once", () => {
    const strings = table();
    const before = strings.keptBytes;
    strings.receive(2, "b".repeat(ASCII.length), ASCII.length, true);
    expect(strings.keptBytes).toBe(before);
    const message = result({ text: "", data: null }, [{ ref: 2, at: ["value", "text"] }]);
    strings.resolve(message);
    expect((message.value as { text: string }).text).toBe("b".repeat(ASCII.length));
  });

  test("a keep: false string serves the message that names it, and is dropped once used", () => {
    const strings = table();
    strings.receive(6, "once", 4, false);
    expect(strings.keptBytes).toBe(ASCII.length + MIXED_BYTES);
    // A message in between that does not name it leaves it (frames of several messages may come first).
    expect(strings.resolve({ type: "emit", id: 1, text: "x" })).toEqual({ bytes: 0 });
    expect(strings.resolve(result({ text: "", data: null }, [{ ref: 2, at: ["value", "text"] }]))).toEqual({
      bytes: ASCII.length,
    });
    const first = result({ text: "", data: [""] }, [
      { ref: 6, at: ["value", "text"] },
      { ref: 6, at: ["value", "data", 0] },
    ]);
    expect(strings.resolve(first)).toEqual({ bytes: 8 });
    expect(first.value).toEqual({ text: "once", data: ["once"] });
    expect(strings.resolve(result({ text: "", data: null }, [{ ref: 6, at: ["value", "text"] }]))).toEqual({
      problem: 'the message names an unknown string {"ref":6,"at":["value","text"]}',
    });
  });

  test("keep: false strings of several messages received ahead each serve their own message", () => {
    const strings = table();
    strings.receive(6, "for the first", 13, false);
    strings.receive(8, "for the second", 14, false);
    const first = result({ text: "", data: null }, [{ ref: 6, at: ["value", "text"] }]);
    const second = result({ text: "", data: null }, [{ ref: 8, at: ["value", "text"] }]);
    expect(strings.resolve(first)).toEqual({ bytes: 13 });
    expect(strings.resolve(second)).toEqual({ bytes: 14 });
    expect([first.value, second.value]).toEqual([
      { text: "for the first", data: null },
      { text: "for the second", data: null },
    ]);
  });

  test("a refused message drops the keep: false strings it used", () => {
    const strings = table();
    strings.receive(6, "once", 4, false);
    const refused = result({ text: "", data: null }, [
      { ref: 6, at: ["value", "text"] },
      { ref: 98, at: ["value", "data"] },
    ]);
    expect(strings.resolve(refused)).toHaveProperty("problem");
    expect(
      strings.resolve(result({ text: "", data: null }, [{ ref: 6, at: ["value", "text"] }])),
    ).toHaveProperty("problem");
  });

  test.each([
    ["not a list", { ref: 2, at: ["value", "text"] }, "`strings` must be a list of {ref, at}"],
    ["an unknown ref", [{ ref: 98, at: ["value", "text"] }], "names an unknown string"],
    ["a ref as text", [{ ref: "2", at: ["value", "text"] }], "names an unknown string"],
    ["no ref", [{ at: ["value", "text"] }], "names an unknown string"],
    ["an entry that is not an object", ["2"], "names an unknown string"],
    ["null", [null], "names an unknown string"],
    ["no at", [{ ref: 2 }], "has no place"],
    ["an empty at", [{ ref: 2, at: [] }], "has no place"],
    ["at not a list", [{ ref: 2, at: "value" }], "has no place"],
    ["a place holding a non-empty string", [{ ref: 2, at: ["value", "data", "full"] }], "has no place"],
    ["a place holding null", [{ ref: 2, at: ["value", "data", "none"] }], "has no place"],
    ["a place holding 0", [{ ref: 2, at: ["value", "data", "zero"] }], "has no place"],
    ["a place holding a container", [{ ref: 2, at: ["value", "data", "nested"] }], "has no place"],
    ["a missing key", [{ ref: 2, at: ["value", "data", "missing"] }], "has no place"],
    ["an inherited key", [{ ref: 2, at: ["value", "data", "toString"] }], "has no place"],
    ["__proto__ when not own", [{ ref: 2, at: ["value", "__proto__"] }], "has no place"],
    ["an index out of range", [{ ref: 2, at: ["value", "data", "list", 2] }], "has no place"],
    ["a negative index", [{ ref: 2, at: ["value", "data", "list", -1] }], "has no place"],
    ["a fractional index", [{ ref: 2, at: ["value", "data", "list", 0.5] }], "has no place"],
    ["a key into a list", [{ ref: 2, at: ["value", "data", "list", "0"] }], "has no place"],
    ["an index into an object", [{ ref: 2, at: ["value", "data", 0] }], "has no place"],
    ["a path through a string", [{ ref: 2, at: ["value", "text", 0] }], "has no place"],
    ["a path through null", [{ ref: 2, at: ["value", "data", "none", "x"] }], "has no place"],
    [
      "the same place twice",
      [
        { ref: 2, at: ["value", "text"] },
        { ref: 4, at: ["value", "text"] },
      ],
      "the string 4",
    ],
  ])("refuses %s", (_, refs, problem) => {
    const strings = table();
    const message = result(
      { text: "", data: { list: ["", ""], full: "x", none: null, zero: 0, nested: { "": "" } } },
      refs,
    );
    const outcome = strings.resolve(message);
    expect(outcome).toHaveProperty("problem");
    expect((outcome as { problem: string }).problem).toContain(problem);
    expect(Object.prototype).not.toHaveProperty("__proto__", ASCII);
    expect(({} as Record<string, unknown>).toString).toBe(Object.prototype.toString);
  });
});
