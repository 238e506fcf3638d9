import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";

/** A parsed YAML file: plain values plus the 1-based line of every key and list item, by field path. */
export interface YamlSource {
  value: unknown;
  /** Line of the key at `field` (`tools.mcp[1].url`), else of its nearest ancestor, else null. */
  lineOf(field: string): number | null;
  /** True when the key at `field` was written as something other than a string (`1:`, `true:`, `~:`). */
  keyNotString(field: string): boolean;
}

export type YamlParse =
  | { ok: true; source: YamlSource }
  | { ok: false; line: number | null; message: string };

const MAX_ALIASES = 100;

/** Field path of a child: `a.b` for keys, `a[2]` for list items, `a[""]` for an empty key. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  if (key === "") return `${parent}[""]`;
  return parent === "" ? key : `${parent}.${key}`;
}

/**
 * Parses one YAML document with the YAML 1.2 core schema (so `on`, `yes` and `no` are strings), keeping the
 * line of every key. Duplicate keys, several documents and syntax errors are reported as not YAML.
 */
export function parseYaml(text: string): YamlParse {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, schema: "core", version: "1.2", uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const offset = first.pos[0];
    const message = (first.message.split("\n")[0] ?? "").replace(/:$/u, "");
    return { ok: false, line: lineCounter.linePos(offset).line, message };
  }
  const lines = new Map<string, number>();
  const nonStringKeys = new Set<string>();
  let aliases = 0;
  const line = (node: { range?: [number, number, number] | null } | null | undefined): number | null =>
    node?.range ? lineCounter.linePos(node.range[0]).line : null;

  const toValue = (node: unknown, path: string, seen: Set<unknown>): unknown => {
    if (isAlias(node)) {
      aliases += 1;
      if (aliases > MAX_ALIASES) throw new AliasError(`more than ${MAX_ALIASES} aliases`);
      const target = node.resolve(doc);
      if (target === undefined || seen.has(target)) throw new AliasError("an alias refers to itself");
      return toValue(target, path, new Set(seen).add(target));
    }
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const keyNode = pair.key as Node | null;
        const rawKey = isScalar(keyNode) ? keyNode.value : keyNode === null ? null : keyNode.toJSON();
        const key = typeof rawKey === "string" ? rawKey : String(rawKey);
        const field = childPath(path, key);
        const at = line(keyNode) ?? line(pair.value as Node | null);
        if (at !== null) lines.set(field, at);
        if (typeof rawKey !== "string") nonStringKeys.add(field);
        out[key] = toValue(pair.value, field, seen);
      }
      return out;
    }
    if (isSeq(node)) {
      return node.items.map((item, index) => {
        const field = childPath(path, index);
        const at = line(item as Node | null);
        if (at !== null) lines.set(field, at);
        return toValue(item, field, seen);
      });
    }
    if (isScalar(node)) return node.value;
    return null;
  };

  try {
    const value = toValue(doc.contents, "", new Set());
    return {
      ok: true,
      source: {
        value,
        lineOf(field) {
          for (let f = field; f !== ""; f = parentPath(f)) {
            const at = lines.get(f);
            if (at !== undefined) return at;
          }
          return null;
        },
        keyNotString: (field) => nonStringKeys.has(field),
      },
    };
  } catch (error) {
    if (error instanceof AliasError) return { ok: false, line: null, message: error.message };
    throw error;
  }
}

class AliasError extends Error {}

function parentPath(field: string): string {
  const cut = Math.max(field.lastIndexOf("."), field.lastIndexOf("["));
  return cut <= 0 ? "" : field.slice(0, cut);
}
