import { DiagnosticSchema } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { extractScriptBlock } from "./block";

const FILE = "/work/flows/review.py";

/** Joins lines with `\n`; the last line gets no line ending unless it is "". */
function lines(...texts: string[]): string {
  return texts.join("\n");
}

function block(source: string) {
  const result = extractScriptBlock(source, FILE);
  expect(result.diagnostics).toEqual([]);
  return result.block;
}

function problems(source: string) {
  const result = extractScriptBlock(source, FILE);
  expect(result.block).toBeNull();
  expect(result.diagnostics.length).toBeGreaterThan(0);
  for (const found of result.diagnostics) {
    expect(DiagnosticSchema.parse(found)).toEqual(found);
    expect(found).toMatchObject({
      code: "metadata_invalid",
      stage: "metadata",
      severity: "error",
      file: FILE,
    });
    expect(found.hint).toBeTruthy();
  }
  return result.diagnostics;
}

describe("extractScriptBlock: PEP 723 framing", () => {
  it("finds nothing in a file without a block", () => {
    expect(block(lines("import os", "# a comment", "print(1)", ""))).toBeNull();
    expect(block("")).toBeNull();
  });

  it("returns the TOML text without the prefixes and the lines of both markers", () => {
    const source = lines(
      "#!/usr/bin/env python3",
      "# /// script",
      '# requires-python = ">=3.10"',
      "#",
      "# [tool.chrys]",
      '# python = "../../.venv"',
      "# ///",
      "from chrys.workflows import WorkflowBuilder",
      "",
    );
    expect(block(source)).toEqual({
      start_line: 2,
      end_line: 7,
      toml: 'requires-python = ">=3.10"\n\n[tool.chrys]\npython = "../../.venv"\n',
    });
  });

  it("accepts a block that ends the file without a trailing newline", () => {
    expect(block(lines("print(1)", "# /// script", '# dependencies = ["x"]', "# ///"))).toEqual({
      start_line: 2,
      end_line: 4,
      toml: 'dependencies = ["x"]\n',
    });
  });

  it("accepts an empty block", () => {
    expect(block(lines("# /// script", "# ///", ""))).toEqual({ start_line: 1, end_line: 2, toml: "" });
  });

  it.each([
    ["CRLF", "\r\n"],
    ["CR", "\r"],
  ])("reads %s line endings as Python does", (_name, newline) => {
    const source = ["x = 1", "# /// script", '# requires-python = ">=3.9"', "# ///", "y = 2", ""].join(
      newline,
    );
    expect(block(source)).toEqual({ start_line: 2, end_line: 4, toml: 'requires-python = ">=3.9"\n' });
  });

  it("ignores a byte order mark before the first line", () => {
    expect(block(`\uFEFF${lines("# /// script", "# ///")}`)).toMatchObject({ start_line: 1, end_line: 2 });
  });

  it("closes at the last `# ///` before the first line that is not content (PEP 723's precedence rule)", () => {
    const source = lines(
      "# /// script",
      '# note = """',
      "# /// <summary>",
      "# ///",
      "# /// </summary>",
      '# """',
      "# ///",
      "x = 1",
    );
    expect(block(source)).toEqual({
      start_line: 1,
      end_line: 7,
      toml: 'note = """\n/// <summary>\n///\n/// </summary>\n"""\n',
    });
  });

  it("leaves ordinary comments after the closing line outside the block", () => {
    const source = lines(
      "# /// script",
      "# dependencies = []",
      "# ///",
      "# an ordinary comment",
      "import os",
    );
    expect(block(source)).toEqual({ start_line: 1, end_line: 3, toml: "dependencies = []\n" });
  });

  it("reads a block inside a string at the start of a line too, as PEP 723's line rules do", () => {
    const source = lines('HELP = """', "# /// script", '# requires-python = ">=3.9"', "# ///", '"""', "");
    expect(block(source)).toMatchObject({ start_line: 2, end_line: 4 });
  });

  it("ignores indented markers: a block starts at the beginning of a line", () => {
    expect(block(lines("def f():", "    # /// script", "    # ///", "    pass"))).toBeNull();
  });

  it("skips blocks of other types, including an unclosed or repeated one", () => {
    const source = lines(
      "# /// pyproject",
      "# [project]",
      "# ///",
      "# /// pyproject",
      "# ///",
      "# /// notes",
      "x = 1",
      "# /// script",
      '# dependencies = ["rich"]',
      "# [tool.chrys]",
      '# python = ".venv"',
      "# ///",
    );
    expect(block(source)).toMatchObject({ start_line: 8, end_line: 12 });
  });

  it("reports a block that is never closed, at its opening line", () => {
    const [found] = problems(lines("x = 1", "# /// script", '# requires-python = ">=3.9"'));
    expect(found).toMatchObject({ line: 2, column: 1, source_line: "# /// script" });
    expect(found!.message).toContain("never closed");
  });

  it("reports the line that breaks a block before it is closed", () => {
    const [found] = problems(
      lines("# /// script", '# requires-python = ">=3.9"', "", "# [tool.chrys]", "# ///", "import os"),
    );
    expect(found).toMatchObject({ line: 3, column: 1, source_line: "" });
    expect(found!.message).toContain("not a comment line");
    expect(found!.notes).toEqual([{ message: 'the "# /// script" block opens here', file: FILE, line: 1 }]);
  });

  it("reports a content line without the space after #", () => {
    const [found] = problems(lines("# /// script", '#requires-python = ">=3.9"', "# ///"));
    expect(found).toMatchObject({ line: 2, source_line: '#requires-python = ">=3.9"' });
    expect(found!.message).toContain('starts with "#" but not "# "');
    expect(found!.hint).toContain("space");
  });

  it("names a closing line that is almost right", () => {
    const [found] = problems(lines("# /// script", "# dependencies = []", "#///", "x = 1"));
    expect(found).toMatchObject({ line: 3 });
    expect(found!.hint).toContain('line 3 ("#///") is not a closing line');

    const [trailing] = problems(lines("# /// script", "# dependencies = []", "# /// "));
    expect(trailing!.message).toContain("never closed");
    expect(trailing!.hint).toContain('line 3 ("# /// ") is not a closing line');
  });

  it("reports a second script block", () => {
    const found = problems(
      lines("# /// script", "# ///", "x = 1", "# /// script", "# dependencies = []", "# ///"),
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ line: 4, source_line: "# /// script" });
    expect(found[0]!.message).toContain("second");
    expect(found[0]!.notes[0]).toMatchObject({ line: 1 });
  });

  it("reports a block opened inside the script block", () => {
    const [found] = problems(
      lines("# /// script", "# dependencies = []", "# /// pyproject", "# [project]", "# ///"),
    );
    expect(found).toMatchObject({ line: 3, source_line: "# /// pyproject" });
    expect(found!.message).toContain('inside the "# /// script" block opened at line 1');
  });

  it("reports a script block swallowed by another block", () => {
    const [found] = problems(
      lines("# /// pyproject", "# [project]", "# /// script", '# dependencies = ["x"]', "# ///"),
    );
    expect(found).toMatchObject({ line: 3, source_line: "# /// script" });
    expect(found!.hint).toContain('close the "pyproject" block');
  });

  it.each([
    ["#/// script"],
    ["# ///script"],
    ["# /// script "],
    ["#  /// script"],
    ["# ///  script"],
    ["# /// script\t"],
  ])("reports the near-miss opening line %j", (opening) => {
    const [found] = problems(lines("x = 1", opening, '# requires-python = ">=3.9"', "# ///"));
    expect(found).toMatchObject({ line: 2, source_line: opening });
    expect(found!.message).toContain('not exactly "# /// script"');
  });
});
