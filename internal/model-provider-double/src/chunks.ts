/**
 * Splits text into the pieces a stream sends: one word with its trailing space each, so a client has to
 * join several deltas to get the text back. Joining the pieces gives the text exactly.
 */
export function textPieces(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** Splits a JSON text into up to `parts` fragments (by code point), as tool-call argument deltas arrive. */
export function jsonFragments(json: string, parts = 3): string[] {
  const points = Array.from(json);
  const size = Math.max(1, Math.ceil(points.length / parts));
  const fragments: string[] = [];
  for (let start = 0; start < points.length; start += size) {
    fragments.push(points.slice(start, start + size).join(""));
  }
  return fragments;
}
