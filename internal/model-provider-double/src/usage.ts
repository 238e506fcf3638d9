import type { ContentReply, Usage } from "./reply";

/** About four characters a token: enough for budgets and counters in tests, and the same on every run. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * The prompt's estimated size: everything the client sent that a model would read (`system` or
 * `instructions`, `messages` or the Responses `input`, `tools`).
 */
export function estimatePromptTokens(body: unknown): number {
  if (typeof body !== "object" || body === null) return 1;
  const { messages, system, tools, input, instructions } = body as Record<string, unknown>;
  return estimateTokens(
    JSON.stringify([system ?? instructions ?? null, messages ?? input ?? null, tools ?? null]),
  );
}

/** The usage a reply reports: its own numbers, else the estimates for the prompt and the reply's output. */
export function usageFor(reply: ContentReply, body: unknown): Usage {
  if (reply.usage !== undefined) return reply.usage;
  const output =
    reply.type === "text"
      ? reply.text
      : (reply.text ?? "") + reply.calls.map((call) => call.name + JSON.stringify(call.arguments)).join("");
  return { inputTokens: estimatePromptTokens(body), outputTokens: estimateTokens(output) };
}
