/*
 * The double stands in for a provider in benchmarks: 200 requests in a row through the real SDK must all
 * succeed and be recorded, on connections that stay open (no timing thresholds: the machine is shared).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ProviderDouble, startProviderDouble, text } from "../src/index";
import { call, MODES, modelFor, WIRES_UNDER_TEST } from "./sdk";

const COUNT = 200;

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());

it.each(WIRES_UNDER_TEST.flatMap((wire) => MODES.map((mode) => [wire, mode] as const)))(
  "serves %s %s requests 200 times in a row",
  async (wire, mode) => {
    provider.reset();
    const route = `seq-${wire}-${mode}`;
    provider.script(
      route,
      Array.from({ length: COUNT }, (_, i) => text(`reply ${i}`)),
    );
    const model = modelFor(provider, wire, route);
    const texts: string[] = [];
    for (let i = 0; i < COUNT; i++) texts.push((await call(model, mode, { prompt: `request ${i}` })).text);

    expect(texts).toEqual(Array.from({ length: COUNT }, (_, i) => `reply ${i}`));
    const records = provider.requestsFor(route);
    expect(records).toHaveLength(COUNT);
    expect(records.every((record) => record.completed && record.stream === (mode === "stream"))).toBe(true);
    expect(provider.maxInFlight).toBe(1);
    // keep-alive: one request after another reuses the client's connection instead of opening 200
    expect(new Set(records.map((record) => record.connection)).size).toBeLessThanOrEqual(2);
  },
);
