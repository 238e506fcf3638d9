import { describe, expect, it } from "vitest";
import { isSchedulerError, type SchedulerErrorCode } from "./errors";
import { startRun } from "./run";
import { createFakes, def, edge, loop, py, recordingSink, when } from "./testing";
import { createVirtualClock } from "./virtual-clock";

function startError(build: () => unknown): SchedulerErrorCode {
  try {
    build();
  } catch (error) {
    if (isSchedulerError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a SchedulerError");
}

describe("startRun refuses runs that cannot start", () => {
  const clock = createVirtualClock();
  const base = { runId: "r", input: { text: "", data: null }, clock, sink: recordingSink() };

  it("executor_missing: a Definition that needs an executor that was not given", () => {
    const { runPython } = createFakes(clock).executors;
    const d = def({
      start: "a",
      outputs: ["L"],
      nodes: [py("a"), loop("L", "e", "e"), py("e", { scope: "L" })],
      edges: [when("a", "L")],
    });
    expect(startError(() => startRun({ ...base, definition: d, executors: { runPython } }))).toBe(
      "executor_missing",
    );
  });

  it("options_invalid: bad concurrency limits and approval gates on unknown nodes", () => {
    const d = def({ start: "a", outputs: ["b"], nodes: [py("a"), py("b")], edges: [edge("a", "b")] });
    const { executors } = createFakes(clock);
    expect(startError(() => startRun({ ...base, definition: d, executors, maxConcurrentAgents: 0 }))).toBe(
      "options_invalid",
    );
    expect(startError(() => startRun({ ...base, definition: d, executors, approvals: ["nope"] }))).toBe(
      "options_invalid",
    );
  });

  it("definition_invalid: a cycle", () => {
    const d = def({
      start: "a",
      outputs: ["b"],
      nodes: [py("a"), py("b"), py("c")],
      edges: [edge("a", "b"), edge("b", "c"), edge("c", "b")],
    });
    expect(
      startError(() => startRun({ ...base, definition: d, executors: createFakes(clock).executors })),
    ).toBe("definition_invalid");
  });
});
