import type { OutputSchema } from "@icode/pipelines";

/** Correction rounds asked for at most, per attempt, before a mismatching handoff blocks the node. */
export const DEFAULT_CORRECTION_ROUNDS = 2;

/**
 * What the engine adds after the node's rendered prompt: how to hand off (the `submit_handoff` tool, or the
 * final message's JSON when the agent has no tools), the schema, and `report_blocked`.
 */
export function handoffInstructions(schema: OutputSchema): string {
  return [
    "When you are done, hand off your result as one JSON object matching this JSON schema:",
    "```json",
    JSON.stringify(schema, null, 2),
    "```",
    "Submit it by calling the `submit_handoff` tool with the object as its arguments. If you cannot call tools, end your final message with the object in a ```json fenced block instead.",
    "If you cannot do the task at all, call the `report_blocked` tool with the reason instead of handing off.",
  ].join("\n");
}

/** The prompt of a correction round: exactly what is wrong, and the ask to submit again. */
export function correctionPrompt(problems: string, round: number, rounds: number): string {
  return [
    `Your handoff does not match the node's output schema (correction ${round} of ${rounds}):`,
    problems,
    "Fix exactly these problems and submit the whole handoff again with `submit_handoff` (or as a ```json block at the end of your message). Do not redo the work.",
  ].join("\n");
}
