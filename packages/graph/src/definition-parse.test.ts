import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CaseSchema, definitionFromOps } from "../test/ops";
import { parseDefinitionFast } from "./definition-parse";
import { type Definition, DefinitionSchema } from "./schema";
import { validateDefinition } from "./validate";

const cases = z
  .array(CaseSchema)
  .parse(JSON.parse(readFileSync(new URL("../../../fixtures/graphs/cases.json", import.meta.url), "utf8")));

/** Every shape the schema knows, with every nullable field both ways. */
function everyShape(): Definition {
  const site = (line: number) => ({ file: "/w/f.py", line, column: 3, end_line: line + 1, end_column: 7 });
  return {
    format: 1,
    title: "every shape",
    description: "all node kinds and conditions",
    start: "a",
    outputs: ["d", "L"],
    nodes: [
      {
        id: "a",
        scope: null,
        site: site(1),
        kind: "python",
        timeout: 2.5,
        retry: { max_attempts: 3, backoff: 0.5 },
        is_async: true,
        takes_context: true,
      },
      {
        id: "b",
        scope: null,
        site: null,
        kind: "agent",
        profile: "coder",
        model: "m",
        instructions_suffix: "be brief",
        timeout: 60,
        retry: { max_attempts: 1, backoff: 0 },
      },
      {
        id: "L",
        scope: null,
        site: site(3),
        kind: "loop",
        entry: "x",
        exit: "x",
        max_iterations: 5,
        on_exhausted: "fail",
      },
      {
        id: "x",
        scope: "L",
        site: site(4),
        kind: "python",
        timeout: null,
        retry: null,
        is_async: false,
        takes_context: false,
      },
      {
        id: "join:d",
        scope: null,
        site: site(5),
        kind: "join",
        sources: ["a", "b"],
        target: "d",
        has_combine: true,
      },
      {
        id: "d",
        scope: null,
        site: null,
        kind: "agent",
        profile: "p",
        model: null,
        instructions_suffix: null,
        timeout: null,
        retry: null,
      },
    ],
    edges: [
      { source: "a", target: "b", scope: null, condition: { kind: "case", index: 0 }, site: site(6) },
      { source: "a", target: "L", scope: null, condition: { kind: "default" }, site: null },
      { source: "b", target: "join:d", scope: null, condition: { kind: "when" }, site: site(7) },
      { source: "a", target: "join:d", scope: null, condition: null, site: null },
      { source: "join:d", target: "d", scope: null, condition: null, site: site(8) },
    ],
    build_site: site(9),
    sites_truncated: true,
  };
}

/** Values put in place of each field in turn: some the schema takes somewhere, most it refuses. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  "",
  "x",
  "python",
  "when",
  "continue",
  0,
  -1,
  1,
  2,
  1.5,
  -0.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 53,
  true,
  false,
  [],
  ["a"],
  [1],
  {},
  { kind: "when" },
  { kind: "case", index: -1 },
  { max_attempts: 1, backoff: 0 },
  { file: "f", line: 1, column: null, end_line: null, end_column: null },
];

type Path = (string | number)[];

/** The path of every value in `root` (objects, arrays and leaves), the root excluded. */
function pathsOf(root: unknown, at: Path = []): Path[] {
  if (typeof root !== "object" || root === null) return [];
  const found: Path[] = [];
  const entries: [string | number, unknown][] = Array.isArray(root)
    ? root.map((v, i) => [i, v])
    : Object.entries(root);
  for (const [key, value] of entries) {
    found.push([...at, key]);
    found.push(...pathsOf(value, [...at, key]));
  }
  return found;
}

function replaced(root: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** The fast parse agrees with the schema: it refuses what zod refuses and returns what zod returns. */
function expectSameAsSchema(input: unknown): boolean {
  const reference = DefinitionSchema.safeParse(input);
  const fast = parseDefinitionFast(input);
  if (!reference.success) {
    expect(fast).toBeNull();
    return false;
  }
  expect(fast).toStrictEqual(reference.data);
  // Key order too: records hand a parsed Definition to JSON.stringify as canonical JSON.
  expect(JSON.stringify(fast)).toBe(JSON.stringify(reference.data));
  return true;
}

function switchCase(): Definition {
  const c = cases.find((item) => item.name === "ok_switch_with_default")!;
  return definitionFromOps(c.name, c.ops);
}

describe("parseDefinitionFast", () => {
  it("returns what DefinitionSchema.parse returns for every fixture case and every node kind", () => {
    const valid = cases.filter((c) => expectSameAsSchema(definitionFromOps(c.name, c.ops)));
    // Only an empty node name or a join without sources breaks the schema; the other cases pass it.
    const refused = new Set(cases.filter((c) => !valid.includes(c)).map((c) => c.expect));
    expect([...refused].sort()).toEqual(["invalid_name", "join_sources"]);
    expect(valid.length).toBeGreaterThanOrEqual(30);
    expect(expectSameAsSchema(everyShape())).toBe(true);
  });

  it("builds new objects with the schema's keys only, in code point order", () => {
    const input = everyShape() as unknown as Record<string, unknown>;
    input.extra = 1;
    (input.nodes as Record<string, unknown>[])[0]!.extra = "dropped";
    const parsed = parseDefinitionFast(input)!;
    expect(parsed).not.toBe(input);
    expect(parsed.nodes[0]).not.toBe((input.nodes as unknown[])[0]);
    expect(Object.keys(parsed)).toEqual(Object.keys(parsed).sort());
    expect(Object.keys(parsed.nodes[0]!)).toEqual(Object.keys(parsed.nodes[0]!).sort());
    expect("extra" in parsed || "extra" in parsed.nodes[0]!).toBe(false);
  });

  it("refuses what the schema refuses and accepts what it accepts, whatever field is changed", () => {
    let accepted = 0;
    let refused = 0;
    for (const base of [everyShape(), switchCase()]) {
      for (const path of pathsOf(base)) {
        for (const value of REPLACEMENTS) {
          if (expectSameAsSchema(replaced(base, path, value))) accepted++;
          else refused++;
        }
      }
    }
    // Both sides are exercised: many changes are still valid (another string, a null site), most are not.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(1000);
  });

  it("refuses what is not a definition at all", () => {
    for (const input of [null, undefined, 1, "x", [], [everyShape()], {}])
      expect(expectSameAsSchema(input)).toBe(false);
  });

  it("leaves refused input to the schema, so validateDefinition still names the problem", () => {
    const input = everyShape() as unknown as { nodes: Record<string, unknown>[] };
    input.nodes[2]!.max_iterations = 0;
    const { definition, diagnostics } = validateDefinition(input);
    expect(definition).toBeNull();
    expect(diagnostics.map((d) => d.message)).toEqual([
      expect.stringMatching(/^schema: nodes\[2\]\.max_iterations: /),
    ]);
  });
});
