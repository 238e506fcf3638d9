import type { PipelineLimits, PipelineStore } from "../../src/index";
import { commandConformance } from "./commands";
import { concurrencyConformance } from "./concurrency";
import { definitionConformance } from "./definitions";
import { eventConformance } from "./events";
import { leaseConformance } from "./leases";
import { runConformance } from "./runs";

/** What the suite gives a backend's initializer: the clock every store instance of a test must use. */
export interface StoreInitOptions {
  now: () => number;
  limits?: PipelineLimits;
}

/** What a backend under test provides. */
export interface StoreFixture {
  store: PipelineStore;
  /** Another store instance over the same data, as a second process would open it. */
  openAnother(): Promise<PipelineStore>;
  cleanup(): Promise<void>;
}

export type StoreInit = (options: StoreInitOptions) => Promise<StoreFixture>;

/**
 * The pipeline store conformance suite: the SQLite store and any other backend run it through one
 * initializer, called once per test (langgraph `checkpoint-validation`; records' `test/conformance/`).
 */
export function pipelineStoreConformance(name: string, init: StoreInit): void {
  definitionConformance(name, init);
  runConformance(name, init);
  leaseConformance(name, init);
  commandConformance(name, init);
  concurrencyConformance(name, init);
  eventConformance(name, init);
}
