import { afterEach, describe, expect, it } from "vitest";
import { node, type RunFixture, runFixture } from "../../test/run-helpers";
import { ScriptedExecutor } from "../testing";

let fx: RunFixture | null = null;
afterEach(async () => {
  await fx?.cleanup();
  fx = null;
});

describe("drivePipelineRun", () => {
  it("runs a chain to success, rendering direct dependencies only", async () => {
    fx = await runFixture({
      name: "Chain",
      nodes: [
        node("a"),
        node("b", ["a"], { prompt_template: "B {{upstream.a.summary}} {{upstream.c.summary}}" }),
        node("c", ["b"]),
      ],
    });
    const executor = new ScriptedExecutor();
    const result = await fx.drive(executor);
    expect(result.stop).toBe("converged");
    expect(result.run.state).toBe("succeeded");
    expect(await fx.states()).toEqual({ a: "succeeded", b: "succeeded", c: "succeeded" });
    expect(executor.callsOf("b")[0]!.prompt).toBe("B a done {{upstream.c.summary}}");
  });
});
