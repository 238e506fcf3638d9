import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import { parse, TomlError } from "smol-toml";
import { scanScriptBlock } from "./block";
import { closest, preview, splitLines } from "./lines";
import { parseRequiresPython } from "./requires-python";
import type { MetadataSites, RequiresPython, ScriptBlock, ScriptMetadata, SourcePosition } from "./schema";
import { type KeySite, locateKeys, pathKey } from "./toml-sites";

/** The top-level keys of a `script` block (PEP 723). Any other top-level key is an error. */
export const SCRIPT_KEYS = ["requires-python", "dependencies", "tool"] as const;
/** The keys of `[tool.chrys]`. Any other key is an error, so that a typo never silently selects the default. */
export const CHRYS_KEYS = ["python"] as const;

export interface ParsedScriptMetadata {
  /** The declaration; all fields empty for a file without a block; `null` when any diagnostic was found. */
  metadata: ScriptMetadata | null;
  /** `metadata_invalid` errors (stage `metadata`); empty when the block is valid or absent. */
  diagnostics: Diagnostic[];
  /** Where the block and its values are, for diagnostics of later stages. */
  sites: MetadataSites;
}

/** What a file without a `# /// script` block declares. */
export function emptyScriptMetadata(): ScriptMetadata {
  return { requires_python: null, dependencies: [], python: null };
}

/**
 * Reads and checks the `# /// script` block of a workflow's entry file.
 *
 * @param file the file's absolute path, reported in diagnostics.
 */
export function parseScriptMetadata(source: string, file: string): ParsedScriptMetadata {
  const lines = splitLines(source);
  const framing = scanScriptBlock(lines, file);
  const sites: MetadataSites = { file, block: null, requires_python: null, dependencies: null, python: null };
  if (framing.diagnostics.length > 0) return { metadata: null, diagnostics: framing.diagnostics, sites };
  if (framing.block === null) return { metadata: emptyScriptMetadata(), diagnostics: [], sites };

  const block = framing.block;
  sites.block = { start_line: block.start_line, end_line: block.end_line };
  const reader = new BlockReader(lines, block, file);

  let root: Record<string, unknown>;
  try {
    root = parse(block.toml);
  } catch (error) {
    return { metadata: null, diagnostics: [reader.tomlError(error)], sites };
  }

  const diagnostics: Diagnostic[] = [];
  const report = (position: SourcePosition, message: string, hint: string, end?: number) =>
    diagnostics.push(reader.diagnostic(position, message, hint, end));

  for (const key of Object.keys(root)) {
    if ((SCRIPT_KEYS as readonly string[]).includes(key)) continue;
    const suggestion = closest(key, SCRIPT_KEYS);
    report(
      reader.keyAt([key]),
      `unknown key ${preview(key)} in the script metadata: a script block holds only requires-python, dependencies and [tool.*] tables`,
      suggestion === null
        ? "remove it; iCode's own settings go in the [tool.chrys] table"
        : `did you mean ${preview(suggestion)}?`,
    );
  }

  let requiresPython: RequiresPython | null = null;
  if (Object.hasOwn(root, "requires-python")) {
    const value = root["requires-python"];
    const at = reader.valueAt(["requires-python"]);
    sites.requires_python = at;
    if (typeof value !== "string") {
      report(
        at,
        `requires-python must be a string, found ${describe(value)}`,
        'write it as a quoted string, such as requires-python = ">=3.10"',
      );
    } else {
      const parsed = parseRequiresPython(value);
      if (parsed.ok) requiresPython = parsed.value;
      else {
        for (const issue of parsed.issues) {
          const position = reader.insideString(["requires-python"], issue.offset);
          report(position.at, issue.message, issue.hint, position.exact ? issue.length : undefined);
        }
      }
    }
  }

  let dependencies: string[] = [];
  if (Object.hasOwn(root, "dependencies")) {
    const value = root["dependencies"];
    const at = reader.valueAt(["dependencies"]);
    sites.dependencies = at;
    if (!Array.isArray(value)) {
      report(
        at,
        `dependencies must be an array of strings, found ${describe(value)}`,
        'write it as an array, such as dependencies = ["requests>=2.31"]',
      );
    } else {
      value.forEach((item: unknown, index) => {
        if (typeof item !== "string") {
          report(
            at,
            `dependencies[${index}] must be a string, found ${describe(item)}`,
            'write each dependency as a quoted string, such as "requests>=2.31"',
          );
        } else if (!DEPENDENCY.test(item)) {
          report(
            at,
            `dependencies[${index}] ${preview(item)} is not a dependency specifier: it must start with a package name`,
            'write a PEP 508 specifier, such as "requests>=2.31" or "rich[jupyter]"',
          );
        }
      });
      dependencies = value.filter((item: unknown): item is string => typeof item === "string");
    }
  }

  let python: string | null = null;
  let pythonWritten = false;
  if (Object.hasOwn(root, "tool")) {
    const tool = root["tool"];
    if (!isTable(tool)) {
      report(
        reader.valueAt(["tool"]),
        `tool must be a table, found ${describe(tool)}`,
        'write iCode settings as a table: a "[tool.chrys]" line followed by python = "…"',
      );
    } else if (Object.hasOwn(tool, "chrys")) {
      const chrys = tool["chrys"];
      if (!isTable(chrys)) {
        report(
          reader.valueAt(["tool", "chrys"]),
          `tool.chrys must be a table, found ${describe(chrys)}`,
          'write a "[tool.chrys]" line followed by python = "…"',
        );
      } else {
        for (const key of Object.keys(chrys)) {
          if ((CHRYS_KEYS as readonly string[]).includes(key)) continue;
          const misplaced = key === "requires-python" || key === "dependencies";
          const suggestion = closest(key, CHRYS_KEYS);
          report(
            reader.keyAt(["tool", "chrys", key]),
            `unknown key ${preview(key)} in [tool.chrys]: the only iCode setting is python`,
            misplaced
              ? `${key} is a top-level field: keys after a [table] line belong to that table, so move it above [tool.chrys]`
              : suggestion === null
                ? "remove it"
                : `did you mean ${preview(suggestion)}?`,
          );
        }
        if (Object.hasOwn(chrys, "python")) {
          pythonWritten = true;
          const value = chrys["python"];
          const at = reader.valueAt(["tool", "chrys", "python"]);
          sites.python = at;
          if (typeof value !== "string" || value.trim() === "" || value.includes("\u0000")) {
            report(
              at,
              `[tool.chrys] python must be a nonempty path, found ${describe(value)}`,
              'write the path of a virtual environment or a Python executable, such as python = "../../.venv"',
            );
          } else {
            python = value;
          }
        }
      }
    }
  }

  if (dependencies.length > 0 && !pythonWritten) {
    report(
      reader.valueAt(["dependencies"]),
      `dependencies lists ${dependencies.length === 1 ? "a package" : `${dependencies.length} packages`} but [tool.chrys] python is not set: loading is refused even if the default environment has those packages`,
      'iCode does not install dependencies: install them in a virtual environment and name it in a [tool.chrys] table (python = "../../.venv"), or remove dependencies',
    );
  }

  if (diagnostics.length > 0) return { metadata: null, diagnostics, sites };
  return { metadata: { requires_python: requiresPython, dependencies, python }, diagnostics, sites };
}

/** A PEP 508 specifier starts with a project name, then ends or goes on with extras, a version, a URL or a marker. */
const DEPENDENCY = /^\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(?:$|[[(;@<>=!~])/;

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return value.trim() === "" ? `the blank string ${preview(value)}` : `the string ${preview(value)}`;
  if (typeof value === "number" || typeof value === "bigint") return `the number ${String(value)}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date-time";
  return "a table";
}

/** Maps positions in the block's TOML text back into the file and builds diagnostics there. */
class BlockReader {
  private readonly keys: Map<string, KeySite>;
  private readonly tomlLines: string[];

  constructor(
    private readonly lines: readonly string[],
    private readonly block: ScriptBlock,
    private readonly file: string,
  ) {
    this.tomlLines = lines
      .slice(block.start_line, block.end_line - 1)
      .map((line) => (line === "#" ? "" : line.slice(2)));
    this.keys = locateKeys(this.tomlLines);
  }

  /** The file position of 0-based TOML line and column (column `null`: the line only). */
  at(tomlLine: number, tomlColumn: number | null): SourcePosition {
    if (this.tomlLines.length === 0) {
      return {
        line: this.block.start_line,
        column: 1,
        source_line: this.lines[this.block.start_line - 1] ?? null,
      };
    }
    let line = tomlLine;
    let column = tomlColumn;
    if (line >= this.tomlLines.length) {
      line = this.tomlLines.length - 1;
      column = this.tomlLines[line]!.length;
    }
    const index = this.block.start_line + Math.max(line, 0);
    const text = this.lines[index]!;
    const prefix = text === "#" ? 1 : 2;
    return { line: index + 1, column: column === null ? null : column + prefix + 1, source_line: text };
  }

  /** Where a key is written, or the nearest enclosing key or table that is, or the opening line. */
  keyAt(path: readonly string[]): SourcePosition {
    const site = this.site(path);
    return site === null ? this.opening() : this.at(site.line, site.keyColumn);
  }

  /** Where a key's value starts, falling back like `keyAt`. */
  valueAt(path: readonly string[]): SourcePosition {
    const site = this.site(path);
    if (site === null) return this.opening();
    return this.at(site.line, site.valueColumn ?? site.keyColumn);
  }

  /**
   * The position of character `offset` of a string value: exact for a one-line string without escapes, else
   * the start of the value.
   */
  insideString(path: readonly string[], offset: number): { at: SourcePosition; exact: boolean } {
    const site = this.site(path);
    if (site === null || site.valueColumn === null || this.keys.get(pathKey(path)) !== site) {
      return { at: this.valueAt(path), exact: false };
    }
    const text = this.tomlLines[site.line]!;
    const quote = text[site.valueColumn];
    const tripled = quote !== undefined && text.startsWith(quote.repeat(3), site.valueColumn);
    const close = quote === undefined ? -1 : text.indexOf(quote, site.valueColumn + 1);
    const body = close === -1 ? "" : text.slice(site.valueColumn + 1, close);
    if (
      (quote !== '"' && quote !== "'") ||
      tripled ||
      close === -1 ||
      (quote === '"' && body.includes("\\"))
    ) {
      return { at: this.valueAt(path), exact: false };
    }
    return { at: this.at(site.line, site.valueColumn + 1 + offset), exact: true };
  }

  diagnostic(position: SourcePosition, message: string, hint: string, length?: number): Diagnostic {
    return diagnostic({
      code: "metadata_invalid",
      stage: "metadata",
      message,
      hint,
      file: this.file,
      ...position,
      ...(length !== undefined && position.column !== null
        ? { end_line: position.line, end_column: position.column + length }
        : {}),
    });
  }

  tomlError(error: unknown): Diagnostic {
    if (error instanceof TomlError) {
      const reason = error.message.split("\n\n")[0]!.replace(/^Invalid TOML document: /, "");
      const atEnd = error.line - 1 >= this.tomlLines.length;
      return this.diagnostic(
        this.at(error.line - 1, error.column - 1),
        `the script metadata is not valid TOML: ${reason}${atEnd ? " (the block ends before the last value is complete: look for an unclosed [, { or string)" : ""}`,
        /redefine/.test(reason)
          ? "each key and table may be written only once; merge the repeated entries"
          : 'fix the TOML on this line; every line of the block is TOML after its "# " prefix, and strings need double quotes, such as python = "../../.venv"',
      );
    }
    return this.diagnostic(
      this.opening(),
      `the script metadata could not be read as TOML: ${error instanceof Error ? error.message : String(error)}`,
      "simplify the TOML in the block",
    );
  }

  private opening(): SourcePosition {
    return {
      line: this.block.start_line,
      column: 1,
      source_line: this.lines[this.block.start_line - 1] ?? null,
    };
  }

  private site(path: readonly string[]): KeySite | null {
    for (let length = path.length; length > 0; length--) {
      const site = this.keys.get(pathKey(path.slice(0, length)));
      if (site !== undefined) return site;
    }
    return null;
  }
}
