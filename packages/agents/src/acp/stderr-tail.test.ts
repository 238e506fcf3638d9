import { describe, expect, it } from "vitest";
import { StderrTail } from "./stderr-tail";

describe("StderrTail", () => {
  it("keeps everything below the limit", () => {
    const tail = new StderrTail(100);
    tail.push("one\n");
    tail.push(Buffer.from("two\n"));
    expect(tail.captured()).toEqual({ text: "one\ntwo\n", truncated: false });
  });

  it("keeps the last bytes past the limit, and says so", () => {
    const tail = new StderrTail(10);
    for (let i = 0; i < 100; i += 1) tail.push(`line ${i}\n`);
    const { text, truncated } = tail.captured();
    expect(truncated).toBe(true);
    expect(text).toBe("8\nline 99\n");
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(10);
  });

  it("does not start with half a character when the cut falls inside one", () => {
    const tail = new StderrTail(5);
    tail.push("ééééé");
    const { text, truncated } = tail.captured();
    expect(truncated).toBe(true);
    expect(text).toBe("éé");
  });
});
