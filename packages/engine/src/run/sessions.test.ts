import { describe, expect, it } from "vitest";
import { SessionTracker } from "./sessions";

describe("SessionTracker", () => {
  it("remembers each session that started a run, in order, and forgets them when taken", () => {
    const tracker = new SessionTracker();
    expect(tracker.has("s1")).toBe(false);
    tracker.add("s1", "echo", "/project");
    tracker.add("s2", "triage", "/project");
    tracker.add("s3", "echo", "/elsewhere");
    expect(tracker.has("s1")).toBe(true);
    expect(tracker.takeAll()).toEqual([
      ["s1", { workflowId: "echo", hookCwd: "/project" }],
      ["s2", { workflowId: "triage", hookCwd: "/project" }],
      ["s3", { workflowId: "echo", hookCwd: "/elsewhere" }],
    ]);
    expect(tracker.has("s1")).toBe(false);
    expect(tracker.takeAll()).toEqual([]);
  });

  it("shares one origin among the sessions of one workflow and folder", () => {
    const tracker = new SessionTracker();
    // Strings built anew per run, as the engine's are: equal, not the same objects.
    for (let i = 0; i < 3; i++) tracker.add(`s${i}`, ["ec", "ho"].join(""), `/pro${"ject"}`);
    tracker.add("other", "echo", "/elsewhere");
    const taken = tracker.takeAll();
    expect(taken).toHaveLength(4);
    expect(taken[1]![1]).toBe(taken[0]![1]);
    expect(taken[2]![1]).toBe(taken[0]![1]);
    expect(taken[3]![1]).not.toBe(taken[0]![1]);
    expect(taken[3]![1]).toEqual({ workflowId: "echo", hookCwd: "/elsewhere" });
  });

  it("keeps a session's first origin when it starts another run", () => {
    const tracker = new SessionTracker();
    tracker.add("s1", "echo", "/project");
    tracker.add("s1", "echo", "/moved");
    expect(tracker.takeAll()).toEqual([["s1", { workflowId: "echo", hookCwd: "/project" }]]);
  });
});
