import { describe, expect, it } from "vitest";
import {
  PipelineDefinitionSchema,
  PipelineNodeSchema,
  pipelineDefinitionSchema,
  RUNTIMES,
} from "./definition";

const NODE = { id: "a", name: "A", prompt_template: "{{task}}" };

describe("the reference's Definition fields", () => {
  // field, a value it accepts, its default (undefined: required), a value it refuses
  it.each([
    ["name", "Review", undefined, ""],
    ["description", "what it is for", "", 3],
    ["nodes", [NODE], undefined, []],
    ["failure_policy", "continue", "pause", "stop"],
    ["auto_supervise", false, true, "yes"],
  ] as const)("%s: accepts %j, defaults to %j, refuses %j", (field, good, fallback, bad) => {
    const base: Record<string, unknown> = { name: "P", nodes: [NODE] };
    const value = PipelineDefinitionSchema.parse({ ...base, [field]: good })[field];
    // nodes come back with their defaults filled in
    if (field === "nodes") expect(value).toMatchObject(good);
    else expect(value).toEqual(good);
    const { [field]: _omitted, ...without } = base;
    const parsed = PipelineDefinitionSchema.safeParse(without);
    if (fallback === undefined) expect(parsed.success).toBe(false);
    else expect(parsed.data?.[field]).toEqual(fallback);
    expect(PipelineDefinitionSchema.safeParse({ ...base, [field]: bad }).success).toBe(false);
  });

  it("accepts every failure policy of the reference", () => {
    for (const policy of ["pause", "fail_fast", "continue"]) {
      expect(
        PipelineDefinitionSchema.parse({ name: "P", nodes: [NODE], failure_policy: policy }).failure_policy,
      ).toBe(policy);
    }
  });

  it("refuses unknown fields and the lifecycle fields, and drops $schema", () => {
    for (const extra of ["status", "revision", "source", "locked", "typo"]) {
      expect(PipelineDefinitionSchema.safeParse({ name: "P", nodes: [NODE], [extra]: 1 }).success).toBe(
        false,
      );
    }
    expect(
      PipelineDefinitionSchema.parse({ $schema: "./pipeline.schema.json", name: "P", nodes: [NODE] }),
    ).not.toHaveProperty("$schema");
  });

  it("takes at least 1 and at most maxNodes nodes", () => {
    const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ ...NODE, id: `n${i}` }));
    expect(PipelineDefinitionSchema.safeParse({ name: "P", nodes: nodes(200) }).success).toBe(true);
    expect(PipelineDefinitionSchema.safeParse({ name: "P", nodes: nodes(201) }).success).toBe(false);
    expect(pipelineDefinitionSchema({ maxNodes: 3 }).safeParse({ name: "P", nodes: nodes(4) }).success).toBe(
      false,
    );
    expect(
      pipelineDefinitionSchema({ maxNodes: 300 }).safeParse({ name: "P", nodes: nodes(201) }).success,
    ).toBe(true);
  });
});

describe("the reference's Node fields", () => {
  // field, a value it accepts, its default (undefined: required), a value it refuses
  it.each([
    ["id", "plan-1", undefined, "a.b"],
    ["name", "Plan", undefined, ""],
    ["profile_id", "Reviewer", null, 5],
    ["prompt_template", "Do {{task}}", undefined, ""],
    ["runtime", "codex", "auto", "claude"],
    ["cwd", "/repo", null, false],
    ["model", "opus", null, 1],
    ["effort", "xhigh", null, "extreme"],
    ["permission_mode", "yolo", null, "ask"],
    ["skip_permissions", true, null, "true"],
    ["isolate", false, null, 0],
    ["depends_on", ["x"], [], "x"],
    ["output_schema", { type: "object" }, null, "object"],
    ["skills", ["lint"], [], [""]],
    ["requires_approval", true, false, null],
    ["reuse_session_of", "plan", null, 2],
  ] as const)("%s: accepts %j, defaults to %j, refuses %j", (field, good, fallback, bad) => {
    const { [field]: _omitted, ...without } = { ...NODE } as Record<string, unknown>;
    expect(PipelineNodeSchema.parse({ ...NODE, [field]: good })[field]).toEqual(good);
    const parsed = PipelineNodeSchema.safeParse(without);
    if (fallback === undefined) expect(parsed.success).toBe(false);
    else expect(parsed.data?.[field]).toEqual(fallback);
    expect(PipelineNodeSchema.safeParse({ ...NODE, [field]: bad }).success).toBe(false);
  });

  it("offers exactly the reference's runtimes", () => {
    expect(RUNTIMES).toEqual(["auto", "claude-code", "codex", "opencode", "kimi-code"]);
    for (const runtime of RUNTIMES)
      expect(PipelineNodeSchema.parse({ ...NODE, runtime }).runtime).toBe(runtime);
  });

  it('stores "" as null where the reference says "Empty"', () => {
    const parsed = PipelineNodeSchema.parse({
      ...NODE,
      profile_id: "",
      cwd: "",
      model: "",
      effort: "",
      permission_mode: "",
      reuse_session_of: "",
    });
    expect(parsed).toMatchObject({
      profile_id: null,
      cwd: null,
      model: null,
      effort: null,
      permission_mode: null,
      reuse_session_of: null,
    });
  });

  it("accepts null for every nullable field", () => {
    const fields = [
      "profile_id",
      "cwd",
      "model",
      "effort",
      "permission_mode",
      "skip_permissions",
      "isolate",
      "output_schema",
      "reuse_session_of",
    ];
    const parsed = PipelineNodeSchema.parse({ ...NODE, ...Object.fromEntries(fields.map((f) => [f, null])) });
    for (const f of fields) expect(parsed[f as keyof typeof parsed]).toBeNull();
  });

  it("refuses unknown node fields", () => {
    expect(PipelineNodeSchema.safeParse({ ...NODE, prompt: "x" }).success).toBe(false);
  });
});
