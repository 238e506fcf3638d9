import { DiagnosticSchema } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { parseScriptMetadata } from "./metadata";
import { MetadataSitesSchema, ScriptMetadataSchema } from "./schema";

const FILE = "/work/.chrys/workflows/review.py";

function lines(...texts: string[]): string {
  return texts.join("\n");
}

/** A workflow file whose script block holds `toml` (one line per entry), starting at line 3. */
function workflow(...toml: string[]): string {
  return lines(
    "# A review workflow",
    "",
    "# /// script",
    ...toml.map((line) => (line === "" ? "#" : `# ${line}`)),
    "# ///",
    "from chrys.workflows import WorkflowBuilder",
    "",
  );
}

function valid(source: string) {
  const result = parseScriptMetadata(source, FILE);
  expect(result.diagnostics).toEqual([]);
  expect(MetadataSitesSchema.parse(result.sites)).toEqual(result.sites);
  return { metadata: ScriptMetadataSchema.parse(result.metadata), sites: result.sites };
}

function invalid(source: string) {
  const result = parseScriptMetadata(source, FILE);
  expect(result.metadata).toBeNull();
  expect(result.diagnostics.length).toBeGreaterThan(0);
  for (const found of result.diagnostics) {
    expect(DiagnosticSchema.parse(found)).toEqual(found);
    expect(found).toMatchObject({ code: "metadata_invalid", stage: "metadata", file: FILE });
    expect(found.hint).toBeTruthy();
    expect(found.line).not.toBeNull();
    expect(found.source_line).toBe(source.split("\n")[found.line! - 1]);
  }
  return result.diagnostics;
}

describe("parseScriptMetadata: values", () => {
  it("reads the spec's example", () => {
    const { metadata, sites } = valid(
      workflow(
        'requires-python = ">=3.10,<3.13"',
        'dependencies = ["requests"]',
        "[tool.chrys]",
        'python = "../../.venv"',
      ),
    );
    expect(metadata).toEqual({
      requires_python: {
        specifier: ">=3.10,<3.13",
        clauses: [
          { operator: ">=", release: [3, 10], wildcard: false },
          { operator: "<", release: [3, 13], wildcard: false },
        ],
      },
      dependencies: ["requests"],
      python: "../../.venv",
    });
    expect(sites).toEqual({
      file: FILE,
      block: { start_line: 3, end_line: 8 },
      requires_python: { line: 4, column: 21, source_line: '# requires-python = ">=3.10,<3.13"' },
      dependencies: { line: 5, column: 18, source_line: '# dependencies = ["requests"]' },
      python: { line: 7, column: 12, source_line: '# python = "../../.venv"' },
    });
  });

  it("declares nothing for a file without a block, or with an empty one", () => {
    const empty = { requires_python: null, dependencies: [], python: null };
    expect(valid("print('hi')\n").metadata).toEqual(empty);
    expect(valid("print('hi')\n").sites.block).toBeNull();
    expect(valid(lines("# /// script", "# ///")).metadata).toEqual(empty);
    expect(valid(workflow("[tool.chrys]")).metadata).toEqual(empty);
  });

  it("allows empty dependencies without an interpreter", () => {
    expect(valid(workflow("dependencies = []")).metadata.dependencies).toEqual([]);
  });

  it("reads dotted keys and other tools' tables", () => {
    const { metadata, sites } = valid(
      workflow('tool.chrys.python = "/opt/venv"', "[tool.uv]", "exclude-newer = 2024-01-01T00:00:00Z"),
    );
    expect(metadata.python).toBe("/opt/venv");
    expect(sites.python).toEqual({ line: 4, column: 23, source_line: '# tool.chrys.python = "/opt/venv"' });
  });

  it("accepts dependency specifiers with extras, versions, URLs and markers", () => {
    const deps = [
      "requests",
      "requests>=2.31",
      "rich[jupyter] ~= 13.0",
      "pkg @ https://example.com/pkg.whl",
      'tomli; python_version < "3.11"',
      "zope.interface (>=5)",
    ];
    const { metadata } = valid(
      workflow(`dependencies = ${JSON.stringify(deps)}`, "[tool.chrys]", 'python = ".venv"'),
    );
    expect(metadata.dependencies).toEqual(deps);
  });

  it("reads CRLF files", () => {
    const source = workflow('requires-python = ">=3.9"', "[tool.chrys]", 'python = ".venv"').replaceAll(
      "\n",
      "\r\n",
    );
    expect(valid(source).metadata.python).toBe(".venv");
  });
});

describe("parseScriptMetadata: errors", () => {
  it("passes framing problems through", () => {
    const [found] = invalid(lines("# /// script", '#python = "x"', "# ///"));
    expect(found).toMatchObject({ line: 2 });
  });

  it("maps a TOML syntax error back to the file's line and column", () => {
    const source = workflow('requires-python = ">=3.10"', "[tool.chrys]", "python = ../../.venv");
    const [found] = invalid(source);
    expect(found!.message).toContain("not valid TOML");
    expect(found).toMatchObject({ line: 6, column: 12, source_line: "# python = ../../.venv" });
    expect(found!.hint).toContain("double quotes");
  });

  it("maps TOML errors in CRLF files and after bare # lines", () => {
    const source = workflow("", 'requires-python = ">=3.9"', "", "python = = 1").replaceAll("\n", "\r\n");
    const [found] = invalid(source.replaceAll("\r\n", "\n"));
    expect(found).toMatchObject({ line: 7, source_line: "# python = = 1" });
    const crlf = parseScriptMetadata(source, FILE).diagnostics[0];
    expect(crlf).toMatchObject({ line: 7, column: found!.column, source_line: "# python = = 1" });
  });

  it("points an error at the end of the block at its last content line", () => {
    const [found] = invalid(workflow("dependencies = [", '  "requests",'));
    expect(found).toMatchObject({ line: 5, source_line: '#   "requests",' });
    expect(found!.message).toContain("the block ends before the last value is complete");
  });

  it("says a key was written twice", () => {
    const [found] = invalid(workflow("[tool.chrys]", 'python = "a"', 'python = "b"'));
    expect(found).toMatchObject({ line: 6 });
    expect(found!.hint).toContain("only once");
  });

  it.each([
    ["requires-python = 3.10", "requires-python must be a string, found the number 3.1"],
    ['requires-python = [">=3.9"]', "requires-python must be a string, found an array"],
    ['dependencies = "requests"', 'dependencies must be an array of strings, found the string "requests"'],
    ["dependencies = [1]", "dependencies[0] must be a string, found the number 1"],
    ['dependencies = [">=1.0"]', 'dependencies[0] ">=1.0" is not a dependency specifier'],
    ['dependencies = [""]', 'dependencies[0] "" is not a dependency specifier'],
    ["tool = 1", "tool must be a table, found the number 1"],
    ['tool = { chrys = "venv" }', 'tool.chrys must be a table, found the string "venv"'],
  ])("rejects %j", (line, message) => {
    const found = invalid(workflow(line));
    expect(found.map((item) => item.message)).toContainEqual(expect.stringContaining(message));
    expect(found[0]).toMatchObject({ line: 4 });
  });

  it.each([
    ["python = 1", "found the number 1"],
    ['python = ""', 'found the blank string ""'],
    ['python = "  "', 'found the blank string "  "'],
    ["python = true", "found the boolean true"],
    ['python = ["a"]', "found an array"],
    ["python = { path = 'a' }", "found a table"],
  ])("rejects [tool.chrys] %s", (line, found) => {
    const [problem, ...others] = invalid(workflow('dependencies = ["requests"]', "[tool.chrys]", line));
    expect(others).toEqual([]);
    expect(problem!.message).toBe(`[tool.chrys] python must be a nonempty path, ${found}`);
    expect(problem).toMatchObject({ line: 6, column: 12 });
  });

  it("rejects unknown keys in [tool.chrys], suggesting the one meant", () => {
    const [found] = invalid(workflow("[tool.chrys]", 'pyhton = ".venv"'));
    expect(found!.message).toBe('unknown key "pyhton" in [tool.chrys]: the only iCode setting is python');
    expect(found!.hint).toBe('did you mean "python"?');
    expect(found).toMatchObject({ line: 5, column: 3 });
  });

  it("explains a top-level field written after [tool.chrys]", () => {
    const [found] = invalid(workflow("[tool.chrys]", 'python = ".venv"', 'requires-python = ">=3.10"'));
    expect(found!.message).toContain('unknown key "requires-python" in [tool.chrys]');
    expect(found!.hint).toContain("move it above [tool.chrys]");
    expect(found).toMatchObject({ line: 6 });
  });

  it("rejects unknown top-level keys", () => {
    const [typo, other] = invalid(workflow('requires_python = ">=3.9"', 'name = "x"'));
    expect(typo!.message).toContain('unknown key "requires_python"');
    expect(typo!.hint).toBe('did you mean "requires-python"?');
    expect(typo).toMatchObject({ line: 4, column: 3 });
    expect(other!.hint).toContain("[tool.chrys]");
  });

  it("refuses dependencies without [tool.chrys] python", () => {
    const [found, ...others] = invalid(
      workflow('requires-python = ">=3.9"', 'dependencies = ["requests", "rich"]'),
    );
    expect(others).toEqual([]);
    expect(found!.message).toBe(
      "dependencies lists 2 packages but [tool.chrys] python is not set: loading is refused even if the default environment has those packages",
    );
    expect(found).toMatchObject({ line: 5, column: 18 });
    expect(found!.hint).toContain("[tool.chrys]");
  });

  it("points a bad requires-python clause at the clause itself", () => {
    const source = workflow('requires-python = ">=3.10, <3.x"');
    const [found] = invalid(source);
    expect(found!.message).toContain('"3.x" is not a numeric release version');
    // `# requires-python = ">=3.10, <3.x"`: the value's quote is column 21, "3.x" is columns 31 to 33.
    expect(found).toMatchObject({ line: 4, column: 31, end_line: 4, end_column: 34 });
    expect(found!.source_line!.slice(30, 33)).toBe("3.x");
  });

  it("points at the value when the string has escapes", () => {
    const [found] = invalid(workflow('requires-python = "\\u003e=3.*"'));
    expect(found).toMatchObject({ line: 4, column: 21, end_column: null });
  });

  it("reports one diagnostic per bad clause", () => {
    expect(invalid(workflow("requires-python = '~=3, >=3.*'"))).toHaveLength(2);
  });

  it("collects every problem of the block", () => {
    const found = invalid(
      workflow("requires-python = 3", "dependencies = [1]", "[tool.chrys]", "python = 2", "venv = 1"),
    );
    expect(found.map((item) => item.line)).toEqual([4, 5, 8, 7]);
  });

  it("points problems inside inline tables at the enclosing key", () => {
    const [found] = invalid(workflow("tool = { chrys = { python = 1 } }"));
    expect(found).toMatchObject({ line: 4, column: 10 });
  });
});
