import { describe, expect, it } from "vitest";
import { UsageMeter } from "./usage";

describe("UsageMeter", () => {
  it("sums requests, and cached and reasoning tokens only when a provider reports them", () => {
    const meter = new UsageMeter();
    expect(meter.add(undefined)).toBe(false);
    expect(meter.add({ inputTokens: 10, outputTokens: 2, totalTokens: 12 })).toBe(true);
    expect(meter.total).toEqual({
      input_tokens: 10,
      output_tokens: 2,
      total_tokens: 12,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: null,
    });
    meter.add({
      inputTokens: 5,
      outputTokens: 1,
      inputTokenDetails: { cacheReadTokens: 4, noCacheTokens: 1, cacheWriteTokens: undefined },
      outputTokenDetails: { reasoningTokens: 1, textTokens: 0 },
    });
    expect(meter.total).toMatchObject({
      input_tokens: 15,
      output_tokens: 3,
      total_tokens: 18,
      cached_input_tokens: 4,
      reasoning_tokens: 1,
    });
    expect(meter.reported).toBe(true);
  });
});
