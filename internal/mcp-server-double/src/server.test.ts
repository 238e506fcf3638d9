import { describe, expect, it } from "vitest";
import { bigText } from "./server";

describe("bigText", () => {
  it("has exactly the length asked for, in a pattern that shows where it was cut", () => {
    expect(bigText(0)).toBe("");
    expect(bigText(12)).toBe("012345678901");
    expect(bigText(1_000_003)).toHaveLength(1_000_003);
  });
});
