import type { TokenUsage } from "@icode/workflow-scheduler";
import type { LanguageModelUsage } from "ai";

/** Token usage of one attempt so far, summed over its model requests (side requests and sub-agents too). */
export class UsageMeter {
  #usage: TokenUsage = emptyUsage();
  #seen = false;

  /** Adds one request's usage; false when the provider reported none. */
  add(usage: Partial<LanguageModelUsage> | TokenUsage | undefined): boolean {
    const u = normalize(usage);
    if (u === null) return false;
    const t = this.#usage;
    this.#usage = {
      input_tokens: t.input_tokens + u.input_tokens,
      output_tokens: t.output_tokens + u.output_tokens,
      total_tokens: t.total_tokens + u.total_tokens,
      cached_input_tokens: sumNullable(t.cached_input_tokens, u.cached_input_tokens),
      reasoning_tokens: sumNullable(t.reasoning_tokens, u.reasoning_tokens),
      cost: null,
    };
    this.#seen = true;
    return true;
  }

  get total(): TokenUsage {
    return this.#usage;
  }

  get reported(): boolean {
    return this.#seen;
  }
}

function emptyUsage(): TokenUsage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    total_tokens: 0,
    cached_input_tokens: null,
    reasoning_tokens: null,
    cost: null,
  };
}

/** A known part is added (to 0 when nothing was known yet); an unknown one leaves the total as it was. */
function sumNullable(total: number | null, part: number | null): number | null {
  if (part === null) return total;
  return (total ?? 0) + part;
}

function isTokenUsage(u: object): u is TokenUsage {
  return "input_tokens" in u;
}

function normalize(usage: Partial<LanguageModelUsage> | TokenUsage | undefined): TokenUsage | null {
  if (usage === undefined) return null;
  if (isTokenUsage(usage)) return usage;
  const input = usage.inputTokens;
  const output = usage.outputTokens;
  if (input === undefined && output === undefined) return null;
  const i = input ?? 0;
  const o = output ?? 0;
  return {
    input_tokens: i,
    output_tokens: o,
    total_tokens: usage.totalTokens ?? i + o,
    cached_input_tokens: usage.inputTokenDetails?.cacheReadTokens ?? null,
    reasoning_tokens: usage.outputTokenDetails?.reasoningTokens ?? null,
    cost: null,
  };
}
