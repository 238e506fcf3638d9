import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { failingClauses, formatClause, matchesRequiresPython, parseRequiresPython } from "./requires-python";
import { type PythonVersion, RequiresPythonSchema } from "./schema";

function clauses(specifier: string) {
  const parsed = parseRequiresPython(specifier);
  if (!parsed.ok) throw new Error(`expected ${specifier} to parse: ${parsed.issues[0]!.message}`);
  expect(RequiresPythonSchema.parse(parsed.value)).toEqual(parsed.value);
  return parsed.value.clauses.map(formatClause);
}

function issues(specifier: string) {
  const parsed = parseRequiresPython(specifier);
  if (parsed.ok) throw new Error(`expected ${JSON.stringify(specifier)} to be rejected`);
  return parsed.issues;
}

describe("parseRequiresPython: the clause grammar the spec allows", () => {
  it.each([
    // [specifier, clauses as iCode prints them]
    [">=3.10", [">=3.10"]],
    [">=3.10,<3.13", [">=3.10", "<3.13"]],
    ["~=3.10", ["~=3.10"]],
    ["~=3.10.2", ["~=3.10.2"]],
    ["==3", ["==3"]],
    ["==3.10", ["==3.10"]],
    ["==3.10.2", ["==3.10.2"]],
    ["==3.*", ["==3.*"]],
    ["==3.10.*", ["==3.10.*"]],
    ["!=3.10.*", ["!=3.10.*"]],
    ["!=3.11", ["!=3.11"]],
    ["<=3.12", ["<=3.12"]],
    [">3", [">3"]],
    ["<4", ["<4"]],
    [">=3.9,!=3.10.*,<3.13", [">=3.9", "!=3.10.*", "<3.13"]],
    // whitespace around operators, versions and commas
    [" >= 3.10 , < 3.13 ", [">=3.10", "<3.13"]],
    [">=\t3.9", [">=3.9"]],
    ["== 3.10.*", ["==3.10.*"]],
    // PEP 440 reads leading zeros as numbers
    ["==03.010", ["==3.10"]],
    [">=3.10.0.0", [">=3.10.0.0"]],
  ])("accepts %j", (specifier, expected) => {
    expect(clauses(specifier)).toEqual(expected);
  });

  it("keeps the text as written and the parts of each clause", () => {
    expect(parseRequiresPython(" ~=3.10 ,!=3.11.*")).toEqual({
      ok: true,
      value: {
        specifier: " ~=3.10 ,!=3.11.*",
        clauses: [
          { operator: "~=", release: [3, 10], wildcard: false },
          { operator: "!=", release: [3, 11], wildcard: true },
        ],
      },
    });
  });

  it.each([
    // [specifier, a phrase the message must hold]
    ["", "empty"],
    ["   ", "empty"],
    [">=3.10,", "empty clause after the last comma"],
    [",>=3.10", "empty clause before the first comma"],
    [">=3.9,,<4", "empty clause between commas 1 and 2"],
    [">=3.9, ,<4", "empty clause"],
    ["===3.10", 'arbitrary equality "==="'],
    ["3.10", "has no operator"],
    ["v3", "is not a version clause"],
    [">=v3", "is not a numeric release version"],
    [">=3.10rc1", "is not a numeric release version"],
    [">=3.10a1", "is not a numeric release version"],
    [">=3.10b2", "is not a numeric release version"],
    ["==3.10.post1", "is not a numeric release version"],
    ["==3.10.dev0", "is not a numeric release version"],
    ["==3.10+local", "is not a numeric release version"],
    ["==1!3.10", "is not a numeric release version"],
    [">=3.", "is not a numeric release version"],
    [">=.3", "is not a numeric release version"],
    [">=3..10", "is not a numeric release version"],
    ["==3.*.1", "is not a numeric release version"],
    [">=3 .10", "is not a numeric release version"],
    [">=3.10 <3.13", "is not a numeric release version"],
    [">=3.10;", "is not a numeric release version"],
    ["> =3.9", "is not a numeric release version"],
    [">=3.*", '".*" works only with "==" and "!="'],
    ["<3.10.*", '".*" works only with "==" and "!="'],
    ["~=3.10.*", '".*" works only with "==" and "!="'],
    ["~=3.*", '".*" works only with "==" and "!="'],
    ["~=3", '"~=" needs at least two version components'],
    ["=>3.9", 'unsupported operator "=>"'],
    ["=3.9", 'unsupported operator "="'],
    ["^3.9", 'unsupported operator "^"'],
    ["*", 'unsupported operator "*"'],
    [">=", "has no version"],
    [">=99999999999999999999", "too large"],
  ])("rejects %j", (specifier, phrase) => {
    const found = issues(specifier);
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]!.message).toContain(phrase);
    expect(found[0]!.hint).not.toBe("");
  });

  it("suggests the operator that was meant", () => {
    expect(issues("=>3.9")[0]!.hint).toContain('">="');
    expect(issues("=3.9")[0]!.hint).toContain('"=="');
    expect(issues("3.10")[0]!.hint).toContain('">=3.10"');
    expect(issues("~=3")[0]!.hint).toContain('"~=3.0"');
  });

  it("reports every bad clause with its offset in the value", () => {
    const found = issues(">=3.10, <3.x ,~=3");
    expect(found.map((issue) => [issue.offset, issue.length])).toEqual([
      [9, 3],
      [14, 3],
    ]);
    expect(found[0]!.message).toContain('"3.x"');
  });

  it("points at the version, not the operator, when only the version is wrong", () => {
    expect(issues(">= 3.10rc1")[0]).toMatchObject({ offset: 3, length: 7 });
  });
});

describe("matchesRequiresPython: PEP 440 for release versions", () => {
  // Expected values computed with packaging 26.2: SpecifierSet(spec).contains(Version(v)).
  const table: Array<[string, Array<[string, boolean]>]> = [
    [
      ">=3.10",
      [
        ["3.9.18", false],
        ["3.10.0", true],
        ["3.10.13", true],
        ["3.13.0", true],
      ],
    ],
    [
      ">=3.10,<3.13",
      [
        ["3.9.18", false],
        ["3.10.0", true],
        ["3.12.9", true],
        ["3.13.0", false],
      ],
    ],
    [
      "==3.10",
      [
        ["3.10.0", true],
        ["3.10.1", false],
        ["3.9.0", false],
      ],
    ],
    [
      "==3.10.0",
      [
        ["3.10.0", true],
        ["3.10.1", false],
      ],
    ],
    [
      "==3",
      [
        ["3.0.0", true],
        ["3.0.1", false],
        ["3.1.0", false],
      ],
    ],
    [
      "==3.*",
      [
        ["3.0.0", true],
        ["3.12.4", true],
        ["2.7.18", false],
        ["4.0.0", false],
      ],
    ],
    [
      "==3.10.*",
      [
        ["3.10.0", true],
        ["3.10.13", true],
        ["3.11.0", false],
        ["3.1.0", false],
      ],
    ],
    [
      "==3.10.0.*",
      [
        ["3.10.0", true],
        ["3.10.1", false],
      ],
    ],
    [
      "==3.10.2.*",
      [
        ["3.10.2", true],
        ["3.10.3", false],
      ],
    ],
    [
      "!=3.10.*",
      [
        ["3.10.5", false],
        ["3.11.0", true],
        ["3.9.18", true],
      ],
    ],
    [
      "!=3.11",
      [
        ["3.11.0", false],
        ["3.11.1", true],
        ["3.12.0", true],
      ],
    ],
    [
      "!=3.11.0",
      [
        ["3.11.0", false],
        ["3.11.1", true],
      ],
    ],
    [
      "~=3.10",
      [
        ["3.9.18", false],
        ["3.10.0", true],
        ["3.12.4", true],
        ["4.0.0", false],
      ],
    ],
    [
      "~=3.10.2",
      [
        ["3.10.1", false],
        ["3.10.2", true],
        ["3.10.9", true],
        ["3.11.0", false],
      ],
    ],
    [
      "~=3.10.0",
      [
        ["3.10.0", true],
        ["3.10.9", true],
        ["3.11.0", false],
      ],
    ],
    [
      "<=3.10",
      [
        ["3.10.0", true],
        ["3.10.1", false],
        ["3.9.18", true],
      ],
    ],
    [
      "<=3.10.1",
      [
        ["3.10.1", true],
        ["3.10.2", false],
      ],
    ],
    [
      "<3.10",
      [
        ["3.9.18", true],
        ["3.10.0", false],
        ["3.10.1", false],
      ],
    ],
    [
      "<3",
      [
        ["2.7.18", true],
        ["3.0.0", false],
      ],
    ],
    [
      ">3.10",
      [
        ["3.10.0", false],
        ["3.10.1", true],
        ["3.11.0", true],
        ["3.9.18", false],
      ],
    ],
    [
      ">3",
      [
        ["3.0.0", false],
        ["3.0.1", true],
        ["3.12.0", true],
      ],
    ],
    [
      ">=3.9,!=3.10.*,<3.13",
      [
        ["3.9.18", true],
        ["3.10.4", false],
        ["3.11.0", true],
        ["3.13.0", false],
      ],
    ],
    [
      "==03.010",
      [
        ["3.10.0", true],
        ["3.1.0", false],
      ],
    ],
    [
      ">=3.10.0.0.0",
      [
        ["3.10.0", true],
        ["3.9.9", false],
      ],
    ],
    [
      "<3.10.0.1",
      [
        ["3.10.0", true],
        ["3.10.1", false],
      ],
    ],
  ];
  const rows = table.flatMap(([spec, versions]) =>
    versions.map(([version, expected]) => [spec, version, expected] as const),
  );

  it.each(rows)("%s with %s → %s", (spec, version, expected) => {
    const tuple = version.split(".").map(Number) as PythonVersion;
    expect(matchesRequiresPython(spec, tuple)).toBe(expected);
    const parsed = parseRequiresPython(spec);
    if (!parsed.ok) throw new Error("table specifiers are valid");
    expect(matchesRequiresPython(parsed.value, tuple)).toBe(expected);
  });

  it("names the clauses that fail", () => {
    expect(failingClauses(">=3.9,!=3.10.*,<3.13", [3, 10, 4]).map(formatClause)).toEqual(["!=3.10.*"]);
    expect(failingClauses(">=3.11,<3.10", [3, 10, 0]).map(formatClause)).toEqual([">=3.11", "<3.10"]);
    expect(failingClauses(">=3.9", [3, 12, 0])).toEqual([]);
  });

  it("throws a metadata_invalid error for a string it cannot parse", () => {
    let thrown: unknown;
    try {
      matchesRequiresPython(">=3.*", [3, 12, 0]);
    } catch (error) {
      thrown = error;
    }
    expect(isWorkflowError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: "metadata_invalid" });
  });
});
