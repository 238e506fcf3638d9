import { describe, expect, it } from "vitest";
import { DEFAULT_PIPELINE_LIMITS, pipelineLimits } from "./limits";

describe("the reference's Limits", () => {
  it("defaults to 200 nodes (a notice above 64), 10 launches and 20000 characters of task input", () => {
    expect(DEFAULT_PIPELINE_LIMITS).toEqual({
      maxNodes: 200,
      maxParallel: 10,
      nodeNotice: 64,
      maxTaskInput: 20_000,
    });
    expect(pipelineLimits({})).toEqual({ limits: DEFAULT_PIPELINE_LIMITS, warnings: [] });
  });

  it.each([
    [{ ICODE_PIPELINE_MAX_NODES: "300" }, { maxNodes: 300, maxParallel: 10 }, []],
    [{ ICODE_PIPELINE_MAX_PARALLEL: "4" }, { maxNodes: 200, maxParallel: 4 }, []],
    [{ ICODE_PIPELINE_MAX_PARALLEL: " 2 " }, { maxNodes: 200, maxParallel: 2 }, []],
    [{ ICODE_PIPELINE_MAX_NODES: "" }, { maxNodes: 200, maxParallel: 10 }, []],
    [{ ICODE_PIPELINE_MAX_NODES: "0" }, { maxNodes: 200, maxParallel: 10 }, ["ICODE_PIPELINE_MAX_NODES"]],
    [{ ICODE_PIPELINE_MAX_NODES: "-5" }, { maxNodes: 200, maxParallel: 10 }, ["ICODE_PIPELINE_MAX_NODES"]],
    [{ ICODE_PIPELINE_MAX_NODES: "12.5" }, { maxNodes: 200, maxParallel: 10 }, ["ICODE_PIPELINE_MAX_NODES"]],
    [{ ICODE_PIPELINE_MAX_NODES: "1e3" }, { maxNodes: 200, maxParallel: 10 }, ["ICODE_PIPELINE_MAX_NODES"]],
    [
      { ICODE_PIPELINE_MAX_PARALLEL: "100001" },
      { maxNodes: 200, maxParallel: 10 },
      ["ICODE_PIPELINE_MAX_PARALLEL"],
    ],
    [
      { ICODE_PIPELINE_MAX_NODES: "many", ICODE_PIPELINE_MAX_PARALLEL: "x" },
      { maxNodes: 200, maxParallel: 10 },
      ["ICODE_PIPELINE_MAX_NODES", "ICODE_PIPELINE_MAX_PARALLEL"],
    ],
    // Only our variables count: the reference's JARVIS_* names are not read.
    [{ JARVIS_PIPELINE_MAX_NODES: "5" }, { maxNodes: 200, maxParallel: 10 }, []],
  ])("%j → %j, warnings for %j", (env, expected, warned) => {
    const { limits, warnings } = pipelineLimits(env);
    expect(limits).toMatchObject(expected);
    expect(warnings.map((w) => w.variable)).toEqual(warned);
    for (const w of warnings) {
      expect(w.code).toBe("pipeline_limit_override_invalid");
      expect(w.message).toContain("using the default");
    }
  });
});
