import { describe, expect, it } from "vitest";
import { HANDOFF_BEHAVIOURS, handoffScript } from "./handoff-scripts";
import { AcpDoubleScriptSchema, stepKind } from "./script";

describe("handoffScript", () => {
  it.each(HANDOFF_BEHAVIOURS)("%s is a valid script", (behaviour) => {
    expect(AcpDoubleScriptSchema.safeParse(handoffScript(behaviour)).success).toBe(true);
  });

  it("scripts each behaviour's steps, with the options' handoff, reason, delay and echo", () => {
    const kinds = (behaviour: (typeof HANDOFF_BEHAVIOURS)[number]) =>
      AcpDoubleScriptSchema.parse(handoffScript(behaviour, { delayMs: 50, echoTurn: true })).turns.map((t) =>
        t.steps.map(stepKind),
      );
    expect(kinds("valid")).toEqual([["echoTurn", "delay", "submitHandoff", "message"]]);
    expect(kinds("corrected")).toHaveLength(2);
    expect(kinds("blocked")).toEqual([["echoTurn", "delay", "reportBlocked"]]);
    expect(kinds("crash")).toEqual([["echoTurn", "delay", "message", "crash"]]);
    expect(kinds("final_json")).toEqual([["echoTurn", "delay", "finalJson"]]);
    const corrected = AcpDoubleScriptSchema.parse(
      handoffScript("corrected", { handoff: { summary: "ok", x: 1 } }),
    );
    expect(corrected.turns.map((t) => t.steps[0]!.submitHandoff)).toEqual([
      { summary: 42, x: 1 },
      { summary: "ok", x: 1 },
    ]);
    const blocked = AcpDoubleScriptSchema.parse(handoffScript("blocked", { reason: "no key" }));
    expect(blocked.turns[0]!.steps[0]!.reportBlocked).toEqual({ reason: "no key" });
  });
});
