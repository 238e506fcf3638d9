import { isWorkflowError } from "@icode/workflow-errors";
import { afterEach, beforeEach } from "vitest";
import type { RunFinish, RunRecorder } from "../../src/index";
import type { StoreFixture } from "./index";

/** Gives each test a fresh fixture and cleans it up afterwards. */
export function useFixture(init: () => Promise<StoreFixture>): () => StoreFixture {
  let current: StoreFixture | null = null;
  beforeEach(async () => {
    current = await init();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = null;
  });
  return () => {
    if (current === null) throw new Error("fixture used outside a test");
    return current;
  };
}

/** The `code` of what `action` rejected or threw with; fails when it succeeded or threw a non-WorkflowError. */
export async function errorCode(action: () => unknown): Promise<string> {
  try {
    await action();
  } catch (error) {
    if (isWorkflowError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a WorkflowError, but the call succeeded");
}

/** What the engine does at a run's end: the final outputs, then the recorder is closed. */
export async function finish(recorder: RunRecorder, result: RunFinish): Promise<void> {
  await recorder.writeOutputs(result);
  await recorder.close();
}
