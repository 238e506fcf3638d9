import { getLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import type { JsonPath } from "./json-pointer";

/** A place in the text: 1-based lines, columns counting characters, `endColumn` just after the last one. */
export interface TextRange {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** A JSON syntax problem with the place it was found. */
export interface JsonSyntaxProblem {
  message: string;
  offset: number;
  length: number;
}

/** An object key given twice; JSON.parse keeps the last value, so the earlier one would be lost silently. */
export interface DuplicateKey {
  path: JsonPath;
  key: string;
  offset: number;
  length: number;
  firstOffset: number;
}

const SYNTAX_WORDS: Record<string, string> = {
  InvalidSymbol: "a character that cannot start a JSON value",
  InvalidNumberFormat: "a malformed number",
  PropertyNameExpected: "a property name in double quotes was expected",
  ValueExpected: "a value was expected",
  ColonExpected: "a colon (:) was expected",
  CommaExpected: "a comma (,) was expected",
  CloseBraceExpected: "a closing brace (}) was expected",
  CloseBracketExpected: "a closing bracket (]) was expected",
  EndOfFileExpected: "the document should end here",
  InvalidCommentToken: "comments are not allowed in JSON",
  UnexpectedEndOfComment: "a comment is not closed (and comments are not allowed in JSON)",
  UnexpectedEndOfString: "a string is not closed",
  UnexpectedEndOfNumber: "a number ends too early",
  InvalidUnicode: "a malformed \\u escape",
  InvalidEscapeCharacter: "an invalid escape in a string",
  InvalidCharacter: "a control character inside a string (escape it, e.g. \\n)",
};

/**
 * A JSON text with the offsets of every value (through `jsonc-parser`, in strict JSON mode), for pointing
 * diagnostics at lines and columns.
 */
export class JsonSource {
  readonly text: string;
  readonly root: Node | undefined;
  readonly syntax: JsonSyntaxProblem[];
  readonly duplicates: DuplicateKey[];
  /** The parsed value when there is no syntax problem, else `undefined`. */
  readonly value: unknown;
  private readonly lineStarts: number[];

  constructor(text: string) {
    this.text = text;
    const errors: ParseError[] = [];
    this.root = parseTree(text, errors, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false,
    });
    this.syntax = errors.map((e) => {
      const name = printParseErrorCode(e.error);
      return { message: SYNTAX_WORDS[name] ?? name, offset: e.offset, length: e.length };
    });
    this.lineStarts = [0];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 13 && text.charCodeAt(i + 1) === 10) continue;
      if (c === 10 || c === 13) this.lineStarts.push(i + 1);
    }
    this.duplicates = [];
    if (this.root !== undefined) this.findDuplicates(this.root, []);
    let value: unknown;
    if (this.syntax.length === 0) {
      try {
        value = JSON.parse(text);
      } catch (error) {
        // jsonc-parser is more lenient than JSON.parse in a few corners; the stricter one decides.
        this.syntax.push({ message: (error as Error).message, offset: 0, length: 0 });
      }
    }
    this.value = value;
  }

  /** The 1-based line and character column of `offset`, and of `offset + length` as the (exclusive) end. */
  range(offset: number, length: number): TextRange {
    const start = this.position(offset);
    const end = this.position(offset + Math.max(length, 1));
    return { line: start.line, column: start.column, endLine: end.line, endColumn: end.column };
  }

  /** The text of 1-based `line`, without its line break. */
  lineText(line: number): string | null {
    const start = this.lineStarts[line - 1];
    if (start === undefined) return null;
    const next = this.lineStarts[line];
    return this.text.slice(start, next ?? this.text.length).replace(/\r?\n$|\r$/, "");
  }

  /**
   * The node at `path`, or the deepest one on the way when the path goes further than the document (a
   * missing field: its object). `key` selects a property's key rather than its value (an unknown field).
   */
  locate(path: JsonPath, key = false): { node: Node; exact: boolean } | null {
    let node = this.root;
    if (node === undefined) return null;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i]!;
      const last = i === path.length - 1;
      let next: Node | undefined;
      if (node.type === "object" && typeof segment === "string") {
        // The last of duplicate keys is the one JSON.parse keeps.
        const property: Node | undefined = node.children
          ?.filter((p) => p.children?.[0]?.value === segment)
          .at(-1);
        if (property !== undefined && last && key) return { node: property.children![0]!, exact: true };
        next = property?.children?.[1];
      } else if (node.type === "array" && typeof segment === "number") {
        next = node.children?.[segment];
      } else if (node.type === "array" && typeof segment === "string" && /^[0-9]+$/.test(segment)) {
        next = node.children?.[Number(segment)];
      }
      if (next === undefined) return { node, exact: false };
      node = next;
    }
    return { node, exact: true };
  }

  /** The path of the value being written at `offset`, even in text that is not valid JSON (for syntax errors). */
  pathAt(offset: number): JsonPath {
    const location = getLocation(this.text, offset);
    // Where a property name is expected, the place is the object, not a key being written.
    return location.isAtPropertyKey ? location.path.slice(0, -1) : location.path;
  }

  /** The offset in the text of character `index` of a string node's value (escapes counted as written). */
  stringOffset(node: Node, index: number): number {
    let raw = node.offset + 1;
    let decoded = 0;
    while (decoded < index && raw < node.offset + node.length - 1) {
      if (this.text[raw] === "\\") raw += this.text[raw + 1] === "u" ? 6 : 2;
      else raw += 1;
      decoded += 1;
    }
    return raw;
  }

  private position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    const start = this.lineStarts[low]!;
    // Characters, not UTF-16 units: a surrogate pair is one column.
    let column = 1;
    for (let i = start; i < offset && i < this.text.length; i++) {
      const c = this.text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < offset) i++;
      column++;
    }
    if (offset > this.text.length) column += offset - this.text.length;
    return { line: low + 1, column };
  }

  private findDuplicates(node: Node, path: (string | number)[]): void {
    if (node.type === "object") {
      const seen = new Map<string, number>();
      for (const property of node.children ?? []) {
        const keyNode = property.children?.[0];
        if (keyNode === undefined || typeof keyNode.value !== "string") continue;
        const key = keyNode.value;
        const first = seen.get(key);
        if (first !== undefined) {
          this.duplicates.push({
            path,
            key,
            offset: keyNode.offset,
            length: keyNode.length,
            firstOffset: first,
          });
        } else seen.set(key, keyNode.offset);
        const value = property.children?.[1];
        if (value !== undefined) this.findDuplicates(value, [...path, key]);
      }
    } else if (node.type === "array") {
      (node.children ?? []).forEach((child, index) => {
        this.findDuplicates(child, [...path, index]);
      });
    }
  }
}
