/**
 * Where keys are written in a TOML text, for pointing diagnostics at the right line and column. smol-toml gives
 * values without positions, so this reads the lines again: table headers (`[a.b]`, `[[a]]`) and `key = value`
 * lines with bare, quoted and dotted keys, skipping multi-line strings. Keys inside inline tables and arrays are
 * not found; callers fall back to the nearest enclosing key that is.
 */

/** A key's place: 0-based line of the TOML text, 0-based columns of the key and of its value (`null` for headers). */
export interface KeySite {
  line: number;
  keyColumn: number;
  valueColumn: number | null;
}

const SEPARATOR = "\u0000";

/** A lookup key for a dotted path such as `["tool", "chrys", "python"]`. */
export function pathKey(path: readonly string[]): string {
  return path.join(SEPARATOR);
}

/** The sites of every key and table the text writes, by `pathKey`; the first site wins. */
export function locateKeys(lines: readonly string[]): Map<string, KeySite> {
  const sites = new Map<string, KeySite>();
  const record = (path: readonly string[], site: KeySite) => {
    const key = pathKey(path);
    if (!sites.has(key)) sites.set(key, site);
  };
  let table: string[] = [];
  let openString: '"""' | "'''" | null = null;

  lines.forEach((line, index) => {
    if (openString !== null) {
      if (line.includes(openString)) openString = null;
      return;
    }
    const start = line.length - line.trimStart().length;
    if (line[start] === "[") {
      const double = line[start + 1] === "[";
      const parsed = readKeyPath(line, start + (double ? 2 : 1));
      if (parsed === null) return;
      table = parsed.segments;
      record(table, { line: index, keyColumn: start, valueColumn: null });
      return;
    }
    const parsed = readKeyPath(line, start);
    if (parsed === null || line[parsed.end] !== "=") return;
    let valueColumn = parsed.end + 1;
    while (line[valueColumn] === " " || line[valueColumn] === "\t") valueColumn++;
    const path = [...table, ...parsed.segments];
    for (let length = table.length + 1; length < path.length; length++) {
      record(path.slice(0, length), { line: index, keyColumn: start, valueColumn: null });
    }
    record(path, { line: index, keyColumn: start, valueColumn });
    for (const delimiter of ['"""', "'''"] as const) {
      if (line.startsWith(delimiter, valueColumn) && !line.includes(delimiter, valueColumn + 3)) {
        openString = delimiter;
      }
    }
  });
  return sites;
}

/** Reads a dotted key starting at `from`; `end` is the index after it and any trailing blanks. */
function readKeyPath(line: string, from: number): { segments: string[]; end: number } | null {
  const segments: string[] = [];
  let position = from;
  for (;;) {
    while (line[position] === " " || line[position] === "\t") position++;
    const segment = readKey(line, position);
    if (segment === null) return null;
    segments.push(segment.text);
    position = segment.end;
    while (line[position] === " " || line[position] === "\t") position++;
    if (line[position] !== ".") return { segments, end: position };
    position++;
  }
}

function readKey(line: string, from: number): { text: string; end: number } | null {
  const quote = line[from];
  if (quote === '"' || quote === "'") {
    let position = from + 1;
    while (position < line.length && line[position] !== quote) {
      position += quote === '"' && line[position] === "\\" ? 2 : 1;
    }
    if (position >= line.length) return null;
    const raw = line.slice(from + 1, position);
    return { text: quote === '"' ? unescapeBasic(raw) : raw, end: position + 1 };
  }
  const bare = /^[A-Za-z0-9_-]+/.exec(line.slice(from));
  return bare === null ? null : { text: bare[0], end: from + bare[0].length };
}

function unescapeBasic(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
