import { isWorkflowError } from "@icode/workflow-errors";
import { afterEach, beforeEach } from "vitest";
import type { PipelineDefinitionInput, PipelineError, PipelineStore } from "../../src/index";
import type { StoreFixture, StoreInit, StoreInitOptions } from "./index";

/** A clock the test moves by hand: lease expiry never depends on real time. */
export class ManualClock {
  private ms = Date.UTC(2026, 0, 1, 12, 0, 0);
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface Fixture extends StoreFixture {
  clock: ManualClock;
}

/** A fresh fixture per test, cleaned up afterwards (every store opened through it is closed). */
export function useFixture(init: StoreInit, options: Omit<StoreInitOptions, "now"> = {}): () => Fixture {
  let current: Fixture | null = null;
  let opened: PipelineStore[] = [];
  beforeEach(async () => {
    const clock = new ManualClock();
    const fixture = await init({ ...options, now: clock.now });
    opened = [];
    current = {
      ...fixture,
      clock,
      openAnother: async () => {
        const another = await fixture.openAnother();
        opened.push(another);
        return another;
      },
    };
  });
  afterEach(async () => {
    for (const store of opened) await store.close();
    await current?.cleanup();
    current = null;
  });
  return () => {
    if (current === null) throw new Error("fixture used outside a test");
    return current;
  };
}

/** The error `action` rejected with; fails when it succeeded or failed with something other than a WorkflowError. */
export async function rejection(action: () => unknown): Promise<PipelineError> {
  try {
    await action();
  } catch (error) {
    if (isWorkflowError(error)) return error as PipelineError;
    throw error;
  }
  throw new Error("expected a PipelineError, but the call succeeded");
}

export async function codeOf(action: () => unknown): Promise<string> {
  return (await rejection(action)).code;
}

/** plan → build, valid. */
export function chain(name = "Chain"): PipelineDefinitionInput {
  return {
    name,
    nodes: [
      { id: "plan", name: "Plan", prompt_template: "Plan {{task}}" },
      {
        id: "build",
        name: "Build",
        prompt_template: "Build {{upstream.plan.summary}}",
        depends_on: ["plan"],
      },
    ],
  };
}

/** A published definition of `chain()`, ready to run. */
export async function published(store: PipelineStore, name = "Chain"): Promise<string> {
  const draft = await store.createDefinition(chain(name));
  await store.publishDefinition(draft.id);
  return draft.id;
}
