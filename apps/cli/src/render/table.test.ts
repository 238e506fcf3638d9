import { describe, expect, it } from "vitest";
import { renderTable } from "./table";

describe("renderTable", () => {
  it("left-aligns columns two spaces apart, pads every column but the last, and ends with a newline", () => {
    expect(
      renderTable(
        ["ID", "Path"],
        [
          ["a", "/x"],
          ["long-id", "/y/z"],
        ],
      ),
    ).toBe("ID       Path\na        /x\nlong-id  /y/z\n");
  });

  it("measures cells in code points: a character outside the BMP is one, a lone surrogate is one", () => {
    const rows = [
      ["\u{1F600}\u{1F600}", "x"], // two code points, four UTF-16 units
      ["ab", "y"],
      ["\uD800", "z"], // a lone high surrogate
      ["\uDC00\uD800", "w"], // a low then a high surrogate: no pair
    ];
    const lines = renderTable(["Title", "Col"], rows).split("\n");
    expect(lines).toEqual([
      "Title  Col",
      "\u{1F600}\u{1F600}     x",
      "ab     y",
      "\uD800      z",
      "\uDC00\uD800     w",
      "",
    ]);
  });

  it("trims a row whose last cells are empty", () => {
    expect(renderTable(["A", "B"], [["x", ""]])).toBe("A  B\nx\n");
  });
});
