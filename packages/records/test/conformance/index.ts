import type { RecordStore } from "../../src/index";
import { exportConformance } from "./export";
import { recoveryConformance } from "./recovery";
import { runConformance } from "./runs";
import { sessionConformance } from "./sessions";

/**
 * What a store under test provides: the store, a workspace folder for session paths, a way to make a
 * run's process look dead or alive to recovery, and cleanup.
 */
export interface StoreFixture {
  store: RecordStore;
  /** An absolute folder to use as the sessions' workspace. */
  workspace: string;
  cleanup(): Promise<void>;
}

/**
 * The records conformance suite: every `RecordStore` (the fs store, any future one) runs it through one
 * initializer, called once per test (langgraph `checkpoint-validation`).
 */
export function recordStoreConformance(name: string, init: () => Promise<StoreFixture>): void {
  sessionConformance(name, init);
  runConformance(name, init);
  recoveryConformance(name, init);
  exportConformance(name, init);
}
