/** A JSON document path: object keys and array indexes, outermost first. */
export type JsonPath = ReadonlyArray<string | number>;

/** The RFC 6901 JSON pointer of `path`: `["nodes", 2, "a/b"]` → `/nodes/2/a~1b`; `[]` → `""`. */
export function toPointer(path: JsonPath): string {
  return path.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}
