import { describe, expect, it } from "vitest";
import {
  checkWorkflowValue,
  combineInputBytes,
  type JsonValue,
  jsonByteLength,
  MAX_COMBINE_INPUT_BYTES,
  MAX_DATA_DEPTH,
  MAX_DATA_VALUES,
  MAX_MESSAGE_BYTES,
  MAX_STRING_CHARS,
  mergeSources,
  WorkflowValueSchema,
} from "./value";

/** `data` nested so that its deepest value sits at `level` (data itself is level 0). */
function nestedTo(level: number, leaf: unknown = "leaf"): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < level; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

function refusal(value: unknown) {
  const result = checkWorkflowValue(value);
  if (result.ok) throw new Error(`expected a refusal, got ok for ${String(value)}`);
  return result;
}

describe("limits", () => {
  it("are the spec's numbers", () => {
    expect(MAX_MESSAGE_BYTES).toBe(16 * 1024 * 1024);
    expect(MAX_DATA_DEPTH).toBe(64);
    expect(MAX_DATA_VALUES).toBe(200_000);
    expect(MAX_STRING_CHARS).toBe(4_194_304);
    expect(MAX_COMBINE_INPUT_BYTES).toBe(12 * 1024 * 1024);
  });
});

describe("checkWorkflowValue", () => {
  it("accepts a string as text with null data, and a WorkflowValue with or without data", () => {
    expect(checkWorkflowValue("hi")).toEqual({ ok: true, value: { text: "hi", data: null } });
    expect(checkWorkflowValue({ text: "hi" })).toEqual({ ok: true, value: { text: "hi", data: null } });
    const value = { text: "t", data: { names: ["Alice", "Bob"], scores: [90, 80.5], ok: true, none: null } };
    expect(checkWorkflowValue(value)).toEqual({ ok: true, value });
    expect(checkWorkflowValue(Object.assign(Object.create(null), { text: "t", data: [] })).ok).toBe(true);
  });

  it("refuses anything that is not a string or a { text, data } object", () => {
    for (const value of [
      undefined,
      null,
      42,
      true,
      ["t"],
      new Map(),
      { data: null },
      { text: 1, data: null },
    ]) {
      expect(refusal(value).code).toBe("value_not_serializable");
    }
    expect(refusal({ text: "t", data: null, extra: 1 }).message).toContain('"extra"');
  });

  describe("depth", () => {
    it(`allows level ${MAX_DATA_DEPTH} and refuses level ${MAX_DATA_DEPTH + 1}`, () => {
      expect(checkWorkflowValue({ text: "", data: nestedTo(64) }).ok).toBe(true);
      expect(checkWorkflowValue({ text: "", data: nestedTo(64, []) }).ok).toBe(true);
      const deep = refusal({ text: "", data: nestedTo(65) });
      expect(deep.code).toBe("value_too_large");
      expect(deep.message).toContain("more than 64 levels");
      // An empty container at level 65 is a value at level 65 too.
      expect(refusal({ text: "", data: nestedTo(65, {}) }).code).toBe("value_too_large");
    });

    it("handles a million levels without overflowing the stack", () => {
      expect(refusal({ text: "", data: nestedTo(1_000_000) }).code).toBe("value_too_large");
    });
  });

  describe("value count", () => {
    it("counts containers and scalars, not keys: the spec's example holds 7 values", () => {
      const example = { names: ["Alice", "Bob"], scores: [90, 80] };
      // 199,993 more values fill the allowance exactly with the example's 7.
      const filler = new Array(MAX_DATA_VALUES - 7 - 1).fill(0);
      expect(checkWorkflowValue({ text: "", data: [example, ...filler] }).ok).toBe(true);
    });

    it(`allows ${MAX_DATA_VALUES.toLocaleString("en-US")} values and refuses one more`, () => {
      const exact = new Array(MAX_DATA_VALUES - 1).fill(1);
      expect(checkWorkflowValue({ text: "", data: exact }).ok).toBe(true);
      const over = new Array(MAX_DATA_VALUES).fill(1);
      expect(refusal({ text: "", data: over }).code).toBe("value_too_large");
      const keyed = Object.fromEntries(
        Array.from({ length: MAX_DATA_VALUES - 1 }, (_, i) => [`k${i}`, null]),
      );
      expect(checkWorkflowValue({ text: "", data: keyed }).ok).toBe(true);
      keyed["one_more"] = null;
      expect(refusal({ text: "", data: keyed }).code).toBe("value_too_large");
    });

    it("refuses a huge sparse array without walking its holes", () => {
      expect(refusal({ text: "", data: new Array(1_000_000_000) }).code).toBe("value_too_large");
    });
  });

  describe("strings", () => {
    it(`allows ${MAX_STRING_CHARS.toLocaleString("en-US")} characters in text or data and refuses one more`, () => {
      const exact = "a".repeat(MAX_STRING_CHARS);
      expect(checkWorkflowValue({ text: exact, data: null }).ok).toBe(true);
      expect(checkWorkflowValue({ text: "", data: [exact] }).ok).toBe(true);
      const textOver = refusal({ text: `${exact}a`, data: null });
      expect(textOver).toMatchObject({ code: "value_too_large" });
      expect(textOver.message).toMatch(/^text holds more than 4,194,304 characters \(4,194,305\)/);
      expect(refusal({ text: "", data: { s: `${exact}a` } }).message).toMatch(/^data\["s"\] holds more than/);
    });

    it("counts code points as Python does: an astral character is one character", () => {
      const astral = "😀".repeat(MAX_STRING_CHARS); // 8,388,608 UTF-16 code units, 16 MiB of UTF-8
      expect(astral.length).toBe(2 * MAX_STRING_CHARS);
      // Within the character limit; refused only for its bytes with the JSON envelope.
      expect(refusal({ text: astral, data: null }).message).toContain("16 MiB");
      const fits = "😀".repeat(MAX_STRING_CHARS / 2);
      expect(checkWorkflowValue({ text: fits, data: null }).ok).toBe(true);
      expect(
        refusal({
          text: `${"😀".repeat(MAX_STRING_CHARS / 2)}${"a".repeat(MAX_STRING_CHARS / 2 + 1)}`,
          data: null,
        }).code,
      ).toBe("value_too_large");
    });

    it("refuses lone surrogates in text, in data and in keys, but accepts proper pairs", () => {
      for (const bad of ["\ud800", "a\udc00b", "\ud83d", "x\ud83dy"]) {
        expect(refusal({ text: bad, data: null }).code).toBe("value_not_serializable");
        expect(refusal({ text: "", data: [bad] }).code).toBe("value_not_serializable");
        expect(refusal({ text: "", data: { [bad]: 1 } }).code).toBe("value_not_serializable");
      }
      expect(refusal({ text: "", data: { a: ["ok", "\udfff"] } }).message).toMatch(
        /^data\["a"\]\[1\] holds a lone surrogate/,
      );
      expect(checkWorkflowValue({ text: "\ud83d\ude00", data: { "\ud83d\ude00": "\ud83d\ude00" } }).ok).toBe(
        true,
      );
    });
  });

  it("refuses non-finite numbers, undefined, bigints, functions and symbols", () => {
    for (const bad of [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      undefined,
      1n,
      () => 1,
      Symbol("s"),
    ]) {
      expect(refusal({ text: "", data: { v: [bad] } })).toMatchObject({ code: "value_not_serializable" });
    }
    expect(refusal({ text: "", data: [1, Number.NaN] }).message).toBe(
      "data[1] is NaN; only finite numbers are allowed",
    );
    expect(refusal({ text: "", data: [Number.NEGATIVE_INFINITY] }).message).toContain("-Infinity");
    expect(refusal({ text: "", data: undefined }).message).toContain("data is undefined");
    const sparse = [1, 2, 3];
    delete sparse[1];
    expect(refusal({ text: "", data: sparse }).message).toContain("data[1] is undefined");
  });

  it("refuses non-plain objects: Map, Set, Date, class instances, boxed values, typed arrays, Array subclasses", () => {
    class Point {
      x = 1;
    }
    class List extends Array<number> {}
    const cases: [unknown, string][] = [
      [new Map(), "a Map"],
      [new Set([1]), "a Set"],
      [new Date(0), "a Date"],
      [new Point(), "a Point"],
      [new String("s"), "a String"],
      [new Uint8Array(2), "a Uint8Array"],
      [List.from([1]), "an Array subclass"],
    ];
    for (const [bad, described] of cases) {
      const result = refusal({ text: "", data: { v: bad } });
      expect(result.code).toBe("value_not_serializable");
      expect(result.message).toContain(`data["v"] is ${described}`);
    }
    const symbolKeyed = { [Symbol("k")]: 1 };
    expect(refusal({ text: "", data: symbolKeyed }).message).toContain("symbol key");
  });

  it("refuses a value that contains itself, but accepts one object referenced twice", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(refusal({ text: "", data: cyclic }).message).toBe('data["self"] contains itself');
    const shared = { n: 1 };
    expect(checkWorkflowValue({ text: "", data: [shared, shared] }).ok).toBe(true);
  });

  it("refuses a value over 16 MiB as UTF-8 JSON, counting escapes and multi-byte characters", () => {
    // 4 strings of 4,194,304 'é' (2 bytes each) hold 32 MiB.
    const wide = "é".repeat(MAX_STRING_CHARS);
    expect(refusal({ text: "", data: [wide, wide] }).message).toContain("16 MiB");
    // Exactly at the limit: envelope 17 + "text" quotes 2 + data `[` `]` + 4 strings with quotes and commas.
    const chunk = MAX_STRING_CHARS - 1;
    const overhead = jsonByteLength({ text: "", data: ["", "", "", ""] });
    const last = MAX_MESSAGE_BYTES - overhead - 3 * chunk;
    const exact = {
      text: "",
      data: ["a".repeat(chunk), "a".repeat(chunk), "a".repeat(chunk), "a".repeat(last)],
    };
    expect(jsonByteLength(exact)).toBe(MAX_MESSAGE_BYTES);
    expect(checkWorkflowValue(exact).ok).toBe(true);
    exact.data[3] += '"'; // one character, two bytes as JSON
    expect(refusal(exact).code).toBe("value_too_large");
  });

  it("is what zod's WorkflowValueSchema accepts, for valid values", () => {
    const value = { text: "t", data: { a: [1, "b", null, { c: false }] } };
    expect(WorkflowValueSchema.parse(value)).toEqual(value);
  });
});

describe("jsonByteLength", () => {
  it("equals the UTF-8 length of JSON.stringify", () => {
    const samples: JsonValue[] = [
      null,
      true,
      false,
      0,
      -0,
      1e21,
      -3.25,
      "",
      'quote " backslash \\ newline \n tab \t bell \u0007 nul \u0000',
      "é € 😀 \u2028",
      [],
      {},
      [1, [2, [3, {}]], { "k é": ["v"] }],
      { a: { b: { c: [null, "x"] } }, "": 0 },
    ];
    for (const sample of samples) {
      expect(jsonByteLength(sample)).toBe(Buffer.byteLength(JSON.stringify(sample), "utf8"));
    }
  });
});

describe("mergeSources", () => {
  const value = (text: string, data: unknown = null) => ({ text, data: data as null });

  it("merges several sources under headings, one blank line apart, without a trailing newline", () => {
    expect(
      mergeSources([
        { node_id: "b", value: value("one", { x: 1 }) },
        { node_id: "c", value: value("two") },
      ]),
    ).toEqual({ text: "## b\none\n\n## c\ntwo", data: null });
  });

  it("keeps the given (incoming-edge) order and texts as they are", () => {
    expect(
      mergeSources([
        { node_id: "second_node", value: value("Second output\n") },
        { node_id: "first_node", value: value("") },
        { node_id: "third", value: value("3") },
      ])?.text,
    ).toBe("## second_node\nSecond output\n\n\n## first_node\n\n\n## third\n3");
  });

  it("passes one source through unchanged, data included, and gives null for none", () => {
    const only = value("solo", { keep: [1, 2] });
    expect(mergeSources([{ node_id: "a", value: only }])).toBe(only);
    expect(mergeSources([])).toBeNull();
  });
});

describe("combineInputBytes", () => {
  it("measures the sources as compact UTF-8 JSON with their identifiers", () => {
    const sources = [
      { node_id: "b", activation_id: "b@iter#1", value: { text: "één", data: { n: [1, 2] } } },
      { node_id: "c", activation_id: "c@iter#2", value: { text: "two", data: null } },
    ];
    expect(combineInputBytes(sources)).toBe(Buffer.byteLength(JSON.stringify(sources), "utf8"));
    expect(combineInputBytes([])).toBe(2);
  });

  it("can be compared with the 12 MiB combine limit", () => {
    const big = "x".repeat(MAX_STRING_CHARS);
    const sources = [0, 1, 2].map((i) => ({
      node_id: `s${i}`,
      activation_id: `s${i}@iter#1`,
      value: { text: big, data: null },
    }));
    expect(combineInputBytes(sources)).toBeGreaterThan(MAX_COMBINE_INPUT_BYTES);
    expect(combineInputBytes(sources.slice(0, 2))).toBeLessThan(MAX_COMBINE_INPUT_BYTES);
  });
});
