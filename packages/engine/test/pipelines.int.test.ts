/**
 * `engine.pipelines`: definitions and their lifecycle through the facade, on a real SQLite file under a
 * temporary configuration directory; validation with the `bindings` stage against real profile files.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { tmpDir, writeTree } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine, StoredDefinitionSchema } from "../src/index";

const PIPELINE = (extra: Record<string, unknown> = {}) =>
  `${JSON.stringify(
    {
      name: "Plan and build",
      nodes: [
        { id: "plan", name: "Plan", prompt_template: "Plan: {{task}}" },
        {
          id: "build",
          name: "Build",
          prompt_template: "Build {{upstream.plan.summary}}",
          depends_on: ["plan"],
          ...extra,
        },
      ],
    },
    null,
    2,
  )}\n`;

const engines: Engine[] = [];
function setup(files: Record<string, string> = {}) {
  const cwd = tmpDir();
  writeTree(cwd, files);
  const home = join(cwd, ".home");
  const env = { ...process.env, CHRYS_HOME: home, CHRYS_MODEL_PROFILE: undefined };
  const engine = createEngine({ cwd, env, homeDir: join(cwd, "home") });
  engines.push(engine);
  return { cwd, home, engine };
}

afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: { code?: string }) => error.code,
  );

describe("engine.pipelines", () => {
  it("opens the store only when used, with the built-ins installed, locked and published", async () => {
    const { home, engine } = setup();
    expect(existsSync(join(home, "pipelines.db"))).toBe(false);
    const listed = await engine.pipelines.listDefinitions();
    expect(existsSync(join(home, "pipelines.db"))).toBe(true);
    const builtins = listed.filter((d) => d.source === "builtin");
    expect(builtins.map((d) => d.id)).toEqual([
      "builtin/docs-and-tests",
      "builtin/plan-implement-review",
      "builtin/review-fan-out",
    ]);
    for (const d of builtins) {
      expect(StoredDefinitionSchema.parse(d)).toEqual(d);
      expect(d).toMatchObject({ locked: true, status: "published" });
    }
    expect(await engine.pipelines.listDefinitions({ status: "draft" })).toEqual([]);
  });

  it("imports a file as a draft, exports it, publishes it with expected_revision, copies and deletes", async () => {
    const { engine } = setup({ "p.json": PIPELINE() });
    const draft = await engine.pipelines.import({ file: "p.json" });
    expect(draft).toMatchObject({ id: "plan-and-build", status: "draft", revision: 1, locked: false });
    const text = await engine.pipelines.export(draft.id);
    expect(JSON.parse(text)).toMatchObject({ name: "Plan and build", failure_policy: "pause" });
    expect(await code(engine.pipelines.publish(draft.id, { expected_revision: 7 }))).toBe(
      "pipeline_revision_conflict",
    );
    const published = await engine.pipelines.publish(draft.id, { expected_revision: 1 });
    expect(published).toMatchObject({ status: "published", revision: 2 });
    const again = await engine.pipelines.import({ text }, { id: "second" });
    expect(again).toMatchObject({ id: "second", status: "draft" });
    const copy = await engine.pipelines.copy("builtin/review-fan-out", { id: "my-review" });
    expect(copy).toMatchObject({ id: "my-review", locked: false, status: "draft", source: "user" });
    expect(await code(engine.pipelines.delete(draft.id, { expected_revision: 1 }))).toBe(
      "pipeline_revision_conflict",
    );
    await engine.pipelines.delete(draft.id, { expected_revision: 2 });
    expect(await code(engine.pipelines.getDefinition(draft.id))).toBe("pipeline_definition_not_found");
  });

  it("refuses to change a locked built-in and says to copy it", async () => {
    const { engine } = setup();
    const error = await engine.pipelines.delete("builtin/review-fan-out").catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "pipeline_definition_locked",
      hint: expect.stringContaining("icode pipeline copy builtin/review-fan-out"),
    });
    expect(await code(engine.pipelines.publish("builtin/review-fan-out"))).toBe("pipeline_definition_locked");
  });

  it("refuses to import a missing file or a text that does not load, with the diagnostics", async () => {
    const { engine } = setup();
    const missing = await engine.pipelines.import({ file: "nope.json" }).catch((e: unknown) => e);
    expect(missing).toMatchObject({
      code: "pipeline_definition_invalid",
      diagnostics: [expect.objectContaining({ code: "pipeline_file_not_found" })],
    });
    const bad = await engine.pipelines.import({ text: '{"name": "x", "nodes": []}' }).catch((e) => e);
    expect(bad).toMatchObject({
      code: "pipeline_definition_invalid",
      diagnostics: [expect.objectContaining({ code: "pipeline_no_nodes", pointer: "/nodes", line: 1 })],
    });
  });

  it("validates through the bindings stage: a profile that does not resolve fails at its pointer", async () => {
    const { engine } = setup({
      "missing.json": PIPELINE({ profile_id: "Nobody" }),
      "found.json": PIPELINE({ profile_id: "Reviewer" }),
      ".home/agents/r.yaml": "name: Reviewer\n",
    });
    const failed = await engine.pipelines.validate({ file: "missing.json" });
    expect(failed.status).toBe("fail");
    expect(failed.stages.find((s) => s.name === "bindings")?.status).toBe("fail");
    expect(failed.diagnostics).toEqual([
      expect.objectContaining({
        code: "agent_profile_missing",
        stage: "bindings",
        pointer: "/nodes/1/profile_id",
        line: 16,
      }),
    ]);
    const passed = await engine.pipelines.validate({ file: "found.json" });
    expect(passed.status).toBe("pass");
    expect(passed.stages.find((s) => s.name === "bindings")?.status).toBe("pass");
    // Publishing runs the same stage.
    const draft = await engine.pipelines.import({ file: "missing.json" });
    expect(await code(engine.pipelines.publish(draft.id))).toBe("pipeline_definition_invalid");
  });

  it("validates text, naming the file it came from", async () => {
    const { engine, cwd } = setup();
    const report = await engine.pipelines.validate({ text: '{"name": "x"}', file: "x.json" });
    expect(report.status).toBe("fail");
    expect(report.target.path).toBe("x.json");
    expect(report.diagnostics[0]).toMatchObject({ file: join(cwd, "x.json"), line: 1 });
  });

  it("close() closes the store; the namespace opens it again when used after", async () => {
    const { engine } = setup();
    await engine.pipelines.listDefinitions();
    await engine.close();
    expect((await engine.pipelines.listDefinitions()).length).toBe(3);
  });
});
