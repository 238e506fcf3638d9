import type { Handoff } from "./handoff";

export type HandoffFromText =
  | { ok: true; handoff: Handoff; from: "fenced_block" | "json_object" }
  | { ok: false; message: string };

/**
 * The fallback for agents that cannot call `submit_handoff`: the handoff in an agent's final message. The last
 * fenced block tagged `json` whose content is one JSON object wins; without one, the last top-level JSON
 * object in the text (an object not inside another one). Only objects count: a handoff is an object.
 *
 * @example
 * parseHandoffFromText('Done.\n```json\n{"summary": "fixed the bug"}\n```');
 * // → { ok: true, handoff: { summary: "fixed the bug" }, from: "fenced_block" }
 */
export function parseHandoffFromText(text: string): HandoffFromText {
  let fenced: Handoff | null = null;
  for (const match of text.matchAll(/^[ \t]*(`{3,}|~{3,})[ \t]*json[^\n]*\n([\s\S]*?)^[ \t]*\1[ \t]*$/gim)) {
    const value = parseObject(match[2]!);
    if (value !== null) fenced = value;
  }
  if (fenced !== null) return { ok: true, handoff: fenced, from: "fenced_block" };
  let last: Handoff | null = null;
  let i = text.indexOf("{");
  while (i !== -1) {
    const end = matchingBrace(text, i);
    const value = end === -1 ? null : parseObject(text.slice(i, end + 1));
    if (value !== null) {
      last = value;
      i = text.indexOf("{", end + 1);
    } else i = text.indexOf("{", i + 1);
  }
  if (last !== null) return { ok: true, handoff: last, from: "json_object" };
  return {
    ok: false,
    message:
      "the final message holds no JSON object: end it with the handoff as a JSON object in a ```json fenced block",
  };
}

function parseObject(text: string): Handoff | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Handoff) : null;
  } catch {
    return null;
  }
}

/** The index of the `}` closing the `{` at `start` (braces inside strings ignored), or -1. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
