import { describe, expect, it } from "vitest";
import { blankStrings, findLargeStrings, LARGE_STRING_CHARS, placeString } from "./large-strings";

const big = (char: string) => char.repeat(LARGE_STRING_CHARS);

describe("findLargeStrings", () => {
  it("finds strings of LARGE_STRING_CHARS or more, depth first, with their paths", () => {
    const a = big("a");
    const b = `${big("é")}€`;
    const value = {
      text: a,
      data: { list: ["short", b, [a]], n: 1, none: null, under: "x".repeat(LARGE_STRING_CHARS - 1) },
    };
    expect(findLargeStrings(value)).toEqual([
      { path: ["text"], text: a },
      { path: ["data", "list", 1], text: b },
      { path: ["data", "list", 2, 0], text: a },
    ]);
  });

  it("looks only under the given paths, and finds a string that is the whole value", () => {
    const a = big("a");
    const message = { type: "invoke", node: a, input: { text: "", data: a } };
    expect(findLargeStrings(message, [["input"]])).toEqual([{ path: ["input", "data"], text: a }]);
    expect(findLargeStrings(a)).toEqual([{ path: [], text: a }]);
    expect(findLargeStrings(message, [["missing", "path"]])).toEqual([]);
  });

  it("leaves strings with lone surrogates in place (they have no exact UTF-8 form)", () => {
    expect(findLargeStrings({ text: `${big("a")}\ud800` })).toEqual([]);
    expect(findLargeStrings({ text: `${big("a")}😀` })).toHaveLength(1);
  });
});

describe("blankStrings and placeString", () => {
  it("blank a copy, share what holds no large string, and put the strings back", () => {
    const a = big("a");
    const shared = { deep: ["x"] };
    const value = { text: a, data: { list: [a, shared], other: shared } };
    const found = findLargeStrings(value);
    const blanked = blankStrings(
      value,
      found.map((s) => s.path),
    );
    expect(blanked).toEqual({ text: "", data: { list: ["", shared], other: shared } });
    expect(value.text).toBe(a);
    expect(value.data.list[0]).toBe(a);
    expect(blanked.data.other).toBe(shared);

    const parsed = JSON.parse(JSON.stringify(blanked));
    for (const { path, text } of found) expect(placeString(parsed, path, text)).toBe(true);
    expect(parsed).toEqual(value);
  });

  it("keep __proto__ keys as own properties", () => {
    const a = big("a");
    const value = JSON.parse(`{"__proto__": "${a}"}`);
    const blanked = blankStrings(value, [["__proto__"]]);
    expect(Object.getPrototypeOf(blanked)).toBe(Object.prototype);
    expect(Object.hasOwn(blanked, "__proto__")).toBe(true);
    const parsed = JSON.parse(JSON.stringify(blanked));
    expect(placeString(parsed, ["__proto__"], a)).toBe(true);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(parsed, "__proto__")?.value).toBe(a);
  });

  it.each([
    ["an empty path", []],
    ["a missing key", ["nope"]],
    ["an index out of range", ["list", 5]],
    ["a key into a list", ["list", "0"]],
    ["a place that is not empty", ["full"]],
    ["a path through a string", ["full", 0]],
    ["an inherited key", ["toString"]],
  ])("placeString refuses %s and changes nothing", (_, path) => {
    const value = { list: [""], full: "x" };
    expect(placeString(value, path, "y")).toBe(false);
    expect(value).toEqual({ list: [""], full: "x" });
  });
});
