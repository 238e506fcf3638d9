import { DiagnosticSchema } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { checkEnvironment } from "./environment";
import { parseScriptMetadata } from "./metadata";
import type { PythonVersion } from "./schema";

const FILE = "/work/.chrys/workflows/review.py";

function declared(requires: string | null) {
  const block = requires === null ? "" : `# requires-python = "${requires}"\n`;
  const source = `# /// script\n${block}# [tool.chrys]\n# python = "../../.venv"\n# ///\n`;
  const { metadata, sites, diagnostics } = parseScriptMetadata(source, FILE);
  expect(diagnostics).toEqual([]);
  return { metadata: metadata!, sites };
}

function check(requires: string | null, version: PythonVersion) {
  const { metadata, sites } = declared(requires);
  const found = checkEnvironment(
    metadata,
    { version_info: version, executable: "/v/bin/python" },
    {
      sites,
      origin: "tool.chrys.python",
    },
  );
  for (const item of found) {
    expect(DiagnosticSchema.parse(item)).toEqual(item);
    expect(item).toMatchObject({ code: "environment_invalid", stage: "environment", file: FILE });
  }
  return found;
}

describe("checkEnvironment", () => {
  it.each([[[3, 9, 0]], [[3, 13, 1]]] as Array<[PythonVersion]>)(
    "accepts Python %j without requires-python",
    (version) => {
      expect(check(null, version)).toEqual([]);
      expect(checkEnvironment(null, { version_info: version })).toEqual([]);
    },
  );

  it.each([[[3, 8, 18]], [[2, 7, 18]], [[3, 0, 0]]] as Array<[PythonVersion]>)(
    "refuses Python %j, older than 3.9",
    (version) => {
      const [found, ...others] = check(null, version);
      expect(others).toEqual([]);
      expect(found!.message).toBe(
        `Python ${version.join(".")} (/v/bin/python) is too old: iCode supports Python 3.9 and later`,
      );
      expect(found).toMatchObject({ line: 3, source_line: '# python = "../../.venv"' });
      expect(found!.hint).toContain("[tool.chrys] python");
    },
  );

  it.each([
    [">=3.10,<3.13", [3, 10, 0], true],
    [">=3.10,<3.13", [3, 12, 9], true],
    [">=3.10,<3.13", [3, 13, 0], false],
    [">=3.10,<3.13", [3, 9, 18], false],
    ["~=3.11", [3, 11, 2], true],
    ["==3.12.*", [3, 11, 9], false],
  ] as Array<[string, PythonVersion, boolean]>)(
    "checks requires-python %s against %j",
    (spec, version, passes) => {
      const found = check(spec, version);
      expect(found.length === 0).toBe(passes);
      if (!passes) {
        expect(found[0]!.message).toContain(`does not satisfy requires-python ${JSON.stringify(spec)}`);
        expect(found[0]).toMatchObject({ line: 2, column: 21 });
        expect(found[0]!.hint).toContain("change requires-python");
      }
    },
  );

  it("names the failing clauses and the interpreter", () => {
    const [found] = check(">=3.10,<3.13", [3, 13, 0]);
    expect(found!.message).toBe(
      'Python 3.13.0 (/v/bin/python) does not satisfy requires-python ">=3.10,<3.13": it fails "<3.13"; iCode does not look for or install another version',
    );
  });

  it("reports both problems of a too-old interpreter that also misses requires-python", () => {
    const found = check(">=3.10", [3, 8, 0]);
    expect(found.map((item) => item.message)).toEqual([
      expect.stringContaining("too old"),
      expect.stringContaining('fails ">=3.10"'),
    ]);
  });

  it("takes a file name instead of a context, and a longer version_info", () => {
    const { metadata } = declared(">=3.12");
    const [found] = checkEnvironment(metadata, { version_info: [3, 11, 4, 0] }, FILE);
    expect(found).toMatchObject({ file: FILE, line: null });
    expect(found!.message).toContain("Python 3.11.4 does not satisfy");
  });

  it("suggests the fix that fits how the interpreter was chosen", () => {
    const { metadata } = declared(">=3.12");
    const hint = (origin: "ICODE_PYTHON" | "PATH") =>
      checkEnvironment(metadata, { version_info: [3, 11, 0] }, { origin })[0]!.hint;
    expect(hint("ICODE_PYTHON")).toContain("set ICODE_PYTHON");
    expect(hint("PATH")).toContain("python3 first on PATH");
    expect(checkEnvironment(metadata, { version_info: [3, 11, 0] })[0]).toMatchObject({
      file: null,
      line: null,
    });
  });
});
