import { appendFileSync, readFileSync } from "node:fs";
import { describeCause, storageFailed } from "./codes";

/**
 * `questions.jsonl`: the full questions of each `ctx.ask`, one line per ask (`{ "ask_id", "questions" }`).
 * The spec wants `events.jsonl` to keep a summary of the questions rather than the questions themselves, and a
 * front end that reconnects to a run still needs them to answer: the `question` event's `questions` field is
 * written here instead, and put back when the log is read.
 */

/** Appends one ask's questions. Throws `storage_failed`. */
export function appendQuestions(path: string, askId: string, questions: unknown): void {
  try {
    appendFileSync(path, `${JSON.stringify({ ask_id: askId, questions })}\n`, { mode: 0o644 });
  } catch (cause) {
    throw storageFailed("the questions of an ask", path, cause);
  }
}

/** The questions of each ask by `ask_id`; a missing file is empty, a torn or bad line is skipped. */
export function readQuestions(path: string): { byAsk: Map<string, unknown>; problem: string | null } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    const missing = (cause as NodeJS.ErrnoException).code === "ENOENT";
    return { byAsk: new Map(), problem: missing ? null : `${path} cannot be read (${describeCause(cause)})` };
  }
  const byAsk = new Map<string, unknown>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const entry = JSON.parse(line) as { ask_id?: unknown; questions?: unknown };
      if (typeof entry.ask_id === "string" && Array.isArray(entry.questions))
        byAsk.set(entry.ask_id, entry.questions);
    } catch {
      // A torn last line: that ask's questions read as none.
    }
  }
  return { byAsk, problem: null };
}
