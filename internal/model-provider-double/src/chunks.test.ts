import { describe, expect, it } from "vitest";
import { jsonFragments, textPieces } from "./chunks";

describe("textPieces", () => {
  it.each(["Hello there, world.", "  leading and trailing  ", "one", "a\nb\tc", "   ", "héllo wörld 🌍 ok"])(
    "splits %j into pieces that join back exactly",
    (text) => {
      expect(textPieces(text).join("")).toBe(text);
    },
  );

  it("gives one piece per word, spaces kept with the word before", () => {
    expect(textPieces("It is sunny.")).toEqual(["It ", "is ", "sunny."]);
    expect(textPieces("")).toEqual([]);
  });
});

describe("jsonFragments", () => {
  it("splits into at most three fragments that join back, without cutting a code point", () => {
    const json = JSON.stringify({ city: "Zürich 🌍", days: [1, 2, 3] });
    const fragments = jsonFragments(json);
    expect(fragments).toHaveLength(3);
    expect(fragments.join("")).toBe(json);
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    for (const fragment of fragments) expect(fragment).not.toMatch(loneSurrogate);
  });

  it("keeps short JSON whole enough: {} gives two fragments of one character", () => {
    expect(jsonFragments("{}")).toEqual(["{", "}"]);
  });
});
