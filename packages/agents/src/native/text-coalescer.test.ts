import { describe, expect, it } from "vitest";
import { TextCoalescer } from "./text-coalescer";

describe("TextCoalescer", () => {
  it("hands on held deltas as one piece on flush, in order, and nothing when empty", () => {
    const out: string[] = [];
    const c = new TextCoalescer((t) => out.push(t), 60_000);
    for (const d of ["Hel", "lo", "", ", wor", "ld"]) c.push(d);
    expect(out).toEqual([]);
    c.flush();
    c.flush();
    c.push("!");
    c.flush();
    expect(out).toEqual(["Hello, world", "!"]);
  });

  it("hands on by itself after the interval, so a long stream is not held to its end", async () => {
    const out: string[] = [];
    const c = new TextCoalescer((t) => out.push(t), 1);
    c.push("a");
    c.push("b");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(out).toEqual(["ab"]);
  });
});
