import { describe, expect, it } from "vitest";
import { parseYaml } from "./yaml-source";

describe("YAML source with lines", () => {
  it("reads with the YAML 1.2 core schema: on, yes, no and off are strings", () => {
    const r = parseYaml("a: on\nb: yes\nc: no\nd: off\ne: true\nf: 0o10\ng: ~\n");
    expect(r.ok && r.source.value).toEqual({ a: "on", b: "yes", c: "no", d: "off", e: true, f: 8, g: null });
  });

  it("knows the 1-based line of every key and list item, and falls back to the nearest ancestor", () => {
    const r = parseYaml("name: x\ntools:\n  mcp:\n    - name: a\n    -\n      name: b\n      url: u\n");
    if (!r.ok) throw new Error(r.message);
    expect(
      [
        "name",
        "tools",
        "tools.mcp",
        "tools.mcp[0]",
        "tools.mcp[0].name",
        "tools.mcp[1]",
        "tools.mcp[1].url",
        "tools.mcp[1].missing",
        "nothing",
      ].map(r.source.lineOf),
    ).toEqual([1, 2, 3, 4, 4, 6, 7, 6, null]);
  });

  it("marks keys that are not strings", () => {
    const r = parseYaml("1: a\ntrue: b\nx: c\n");
    if (!r.ok) throw new Error(r.message);
    expect([r.source.keyNotString("1"), r.source.keyNotString("true"), r.source.keyNotString("x")]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("resolves aliases, and refuses too many of them", () => {
    const r = parseYaml("base: &b {x: 1}\ncopy: *b\n");
    expect(r.ok && r.source.value).toEqual({ base: { x: 1 }, copy: { x: 1 } });
    const bomb = [
      "a: &a [x, x]",
      ...Array.from(
        { length: 12 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
      ),
    ].join("\n");
    expect(parseYaml(bomb)).toMatchObject({ ok: false });
  });

  it("reports the line of a syntax error", () => {
    expect(parseYaml("a: 1\nb: [\n")).toMatchObject({ ok: false, line: 3 });
  });
});
