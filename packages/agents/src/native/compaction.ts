import type { ModelProfile } from "@icode/agent-profiles";
import type { ModelMessage } from "ai";

/**
 * Compaction of a conversation that would not fit the model's context window (agent-profiles.md 2.6): a
 * side request writes a continuation note in a fixed format (the profile's `last_words_template` is added
 * to it, never replaces it), and the conversation goes on from the task plus that note. Tokens are
 * estimated as characters / 4, as for memory.
 */

/** The fixed format of the continuation note. */
export const NOTE_INSTRUCTIONS = [
  "You are writing a continuation note: the conversation below is about to be cut, and only this note and the original task will remain.",
  "Write the note so that you can finish the task from it alone. Use these sections:",
  "## Goal: the task, in a sentence or two.",
  "## Done so far: what has been done and found, with exact file paths, commands, values and results.",
  "## State: what is true now (files changed, things started) and anything half-done.",
  "## Next steps: what remains, in order.",
  "Be concise and concrete. Do not call tools. Write only the note.",
].join("\n");

export const NOTE_HEADER =
  "[The conversation so far was compacted to fit the context window. Continue the task from this note.]";

/** Estimated tokens of what a request sends. */
export function estimateTokens(
  system: string,
  messages: readonly ModelMessage[],
  toolsChars: number,
): number {
  let chars = system.length + toolsChars;
  for (const m of messages)
    chars += typeof m.content === "string" ? m.content.length : JSON.stringify(m.content).length;
  return Math.ceil(chars / 4);
}

/** Room kept for the reply and a safety margin: the request must fit in the window minus this. */
export function reservedTokens(
  model: Pick<ModelProfile, "max_context_tokens" | "max_output_tokens">,
): number {
  const window = model.max_context_tokens;
  const reply = Math.min(model.max_output_tokens, Math.floor(window / 2));
  const margin = Math.max(Math.ceil(window * 0.05), Math.min(1000, Math.floor(window / 10)));
  return reply + margin;
}

export function wouldOverflow(
  estimate: number,
  model: Pick<ModelProfile, "max_context_tokens" | "max_output_tokens">,
): boolean {
  return estimate > model.max_context_tokens - reservedTokens(model);
}

/** The note's output cap: `last_words_max_output_tokens`, lowered to the model's `max_output_tokens`. */
export function noteOutputCap(lastWordsMax: number, model: Pick<ModelProfile, "max_output_tokens">): number {
  return Math.max(1, Math.min(lastWordsMax, model.max_output_tokens));
}

/**
 * The conversation as text for the note request, within `maxChars`: the start (the task) and as much of
 * the end as fits, long tool results shortened. Plain text, so no tool call is left without its result.
 */
export function renderConversation(messages: readonly ModelMessage[], maxChars: number): string {
  const lines = messages.map((m) => `[${m.role}] ${partsText(m)}`);
  const whole = lines.join("\n\n");
  if (whole.length <= maxChars) return whole;
  const head = (lines[0] ?? "").slice(0, Math.floor(maxChars / 4));
  const gap = "\n\n[… earlier part of the conversation left out …]\n\n";
  const room = Math.max(0, maxChars - head.length - gap.length);
  return `${head}${gap}${whole.slice(whole.length - room)}`;
}

const TOOL_RESULT_CHARS = 4000;

function partsText(m: ModelMessage): string {
  if (typeof m.content === "string") return m.content;
  return m.content
    .map((part) => {
      switch (part.type) {
        case "text":
          return part.text;
        case "reasoning":
          return "";
        case "tool-call":
          return `(calls ${part.toolName} with ${JSON.stringify(part.input)})`;
        case "tool-result": {
          const out = part.output;
          const value =
            "value" in out ? (typeof out.value === "string" ? out.value : JSON.stringify(out.value)) : "";
          const short = value.length > TOOL_RESULT_CHARS ? `${value.slice(0, TOOL_RESULT_CHARS)} […]` : value;
          return `(${part.toolName} ${out.type === "error-text" ? "failed" : "returned"}: ${short})`;
        }
        default:
          return `(${part.type})`;
      }
    })
    .filter((t) => t !== "")
    .join("\n");
}

export function continuationMessage(task: string, note: string): ModelMessage {
  return { role: "user", content: `${task}\n\n${NOTE_HEADER}\n\n${note.trim()}` };
}
