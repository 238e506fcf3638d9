/**
 * `icode pipeline list|show|validate|import|export|publish|copy|delete` through the built CLI, on a real
 * SQLite file in a temporary configuration directory: every command, each error code path with its hint,
 * the built-ins listed as locked, the lifecycle (import → draft → publish → revision), and
 * `--expected-revision` conflicts. Reads outputs as a user would; imports nothing of the code under test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  agentCommand,
  type HandoffBehaviour,
  handoffScript,
  readAgentLog,
  writeAgentScript,
} from "@icode/acp-agent-double";
import { CLI_BIN, type CliResult, runCli, waitUntil } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { icode, type Project, project } from "./run-helpers";

const PIPELINE = `{
  "name": "Plan and build",
  "description": "Plans, then builds.",
  "nodes": [
    { "id": "plan", "name": "Plan", "prompt_template": "Plan: {{task}}" },
    {
      "id": "build",
      "name": "Build",
      "prompt_template": "Build {{upstream.plan.summary}}",
      "depends_on": ["plan"],
      "requires_approval": true
    }
  ]
}
`;

/** The same pipeline with an unknown dependency: loads (a draft may be stored) but does not validate. */
const BROKEN = PIPELINE.replace('"depends_on": ["plan"]', '"depends_on": ["plan", "nope"]');

const BUILTINS = ["builtin/docs-and-tests", "builtin/plan-implement-review", "builtin/review-fan-out"];

/** stdout of a `--json` command: one line, one object. */
function json(r: CliResult): Record<string, unknown> {
  expect(r.stdout.endsWith("\n"), r.stderr).toBe(true);
  expect(r.stdout.slice(0, -1)).not.toContain("\n");
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** A refusal: exit 1, `icode: … [code]` and a help line on stderr; with `--json` the error object on stdout. */
function refused(r: CliResult, code: string, help: string | RegExp): void {
  expect(r.exitCode, r.stderr).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^icode: .*\\[${code}\\]$`, "m"));
  expect(r.stderr).toMatch(typeof help === "string" ? `  help: ${help}` : help);
}

function refusedJson(r: CliResult, code: string): Record<string, unknown> {
  expect(r.exitCode, r.stderr).toBe(1);
  const error = json(r).error as Record<string, unknown>;
  expect(error).toMatchObject({ code, message: expect.any(String) });
  return error;
}

const withPipelines = (): Project => project({ "p.json": PIPELINE, "broken.json": BROKEN });

describe("icode pipeline", () => {
  it("lists the built-ins as published and locked, from a database made on first use", async () => {
    const p = withPipelines();
    expect(existsSync(join(p.home, "pipelines.db"))).toBe(false);
    const text = await icode(p, ["pipeline", "list"]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(existsSync(join(p.home, "pipelines.db"))).toBe(true);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+Status\s+Revision\s+Source\s+Nodes\s+Name$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(BUILTINS);
    for (const l of lines.slice(1)) expect(l).toMatch(/\spublished\s+1\s+builtin \(locked\)\s+\d+\s+\S/);

    const listed = json(await icode(p, ["pipeline", "list", "--json"]));
    expect(listed.version).toBe(1);
    const definitions = listed.definitions as Record<string, unknown>[];
    expect(definitions.map((d) => d.id)).toEqual(BUILTINS);
    for (const d of definitions) {
      expect(Object.keys(d).sort()).toEqual(
        [
          "description",
          "id",
          "locked",
          "name",
          "node_count",
          "published_at",
          "revision",
          "source",
          "status",
          "updated_at",
        ].sort(),
      );
      expect(d).toMatchObject({ locked: true, source: "builtin", status: "published", revision: 1 });
    }
    const drafts = await icode(p, ["pipeline", "list", "--status", "draft"]);
    expect(drafts).toMatchObject({
      exitCode: 0,
      stdout: "No draft pipelines. See all with: icode pipeline list\n",
    });
    expect(json(await icode(p, ["pipeline", "list", "--status", "draft", "--json"]))).toEqual({
      version: 1,
      definitions: [],
    });
  });

  it("validates a file with JSON pointers and line:column, the report and exit codes of workflow validate", async () => {
    const p = withPipelines();
    const pass = await icode(p, ["pipeline", "validate", "p.json"]);
    expect(pass.exitCode, pass.stdout).toBe(0);
    expect(pass.stdout).toMatch(/^PASS /m);
    expect((await icode(p, ["pipeline", "validate", "-q", "p.json"])).stdout).toBe("");

    const fail = await icode(p, ["pipeline", "validate", "broken.json"]);
    expect(fail.exitCode).toBe(1);
    expect(fail.stdout).toContain(
      './broken.json:10:30: error: node "build" depends on "nope", which is not a node of this pipeline [pipeline_unknown_dependency]',
    );
    expect(fail.stdout).toMatch(/^FAIL broken\.json: 1 error$/m);
    expect(fail.stderr).toBe("");

    const report = json(await icode(p, ["pipeline", "validate", "broken.json", "--json"]));
    expect(report).toMatchObject({ version: 1, status: "fail" });
    expect(report.diagnostics).toEqual([
      expect.objectContaining({
        code: "pipeline_unknown_dependency",
        stage: "graph",
        pointer: "/nodes/1/depends_on/1",
        line: 10,
        column: 30,
        file: join(p.dir, "broken.json"),
      }),
    ]);
    const stages = Object.fromEntries(
      (report.stages as { name: string; status: string }[]).map((s) => [s.name, s.status]),
    );
    expect(stages).toEqual({
      resolve: "pass",
      read: "pass",
      metadata: "skipped",
      environment: "skipped",
      load: "pass",
      graph: "fail",
      bindings: "skipped",
    });
    const passed = json(await icode(p, ["pipeline", "validate", "p.json", "--json"]));
    expect(passed.stages).toContainEqual({ name: "bindings", status: "pass" });

    const missing = await icode(p, ["pipeline", "validate", "nope.json"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout).toContain("[pipeline_file_not_found]");
    // A usage error: exit 2, nothing on stdout.
    const usage = await icode(p, ["pipeline", "validate"]);
    expect(usage).toMatchObject({ exitCode: 2, stdout: "" });
  });

  it("reports a profile that does not resolve in the bindings stage, at its pointer", async () => {
    const p = project({
      "p.json": PIPELINE.replace('"name": "Plan",', '"name": "Plan", "profile_id": "Nobody",'),
    });
    const r = await icode(p, ["pipeline", "validate", "p.json", "--json"]);
    expect(r.exitCode).toBe(1);
    expect(json(r).diagnostics).toEqual([
      expect.objectContaining({
        code: "agent_profile_missing",
        stage: "bindings",
        pointer: "/nodes/0/profile_id",
      }),
    ]);
  });

  it("goes through the lifecycle: import → draft → publish → revision, then export, copy and delete", async () => {
    const p = withPipelines();
    const imported = await icode(p, ["pipeline", "import", "p.json"]);
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(imported.stdout).toBe(
      "imported p.json as plan-and-build (draft, revision 1)\n  next: icode pipeline publish plan-and-build\n",
    );
    const shown = json(await icode(p, ["pipeline", "show", "plan-and-build", "--json"]));
    expect(shown.definition).toMatchObject({
      id: "plan-and-build",
      status: "draft",
      revision: 1,
      source: "user",
      locked: false,
      published_at: null,
      definition: { name: "Plan and build", failure_policy: "pause", auto_supervise: true },
    });
    const showText = await icode(p, ["pipeline", "show", "plan-and-build"]);
    expect(showText.stdout).toContain("pipeline plan-and-build · Plan and build\n");
    expect(showText.stdout).toContain("draft, revision 1 · failure policy pause · auto-supervise on");
    expect(showText.stdout).toMatch(/^ {2}build\s+Build\s+plan\s+-\s+auto\s+approval$/m);
    expect(showText.stdout).toContain("draft: publish it to run it: icode pipeline publish plan-and-build");
    expect((await icode(p, ["pipeline", "list", "--status", "draft"])).stdout).toContain("plan-and-build");

    const published = await icode(p, ["pipeline", "publish", "plan-and-build", "--expected-revision", "1"]);
    expect(published).toMatchObject({ exitCode: 0, stdout: "published plan-and-build (revision 2)\n" });
    const again = await icode(p, ["pipeline", "publish", "plan-and-build"]);
    expect(again.stdout).toBe("plan-and-build is already published (revision 2); nothing changed\n");
    const publishedJson = json(await icode(p, ["pipeline", "publish", "plan-and-build", "--json"]));
    expect(publishedJson).toMatchObject({
      version: 1,
      definition: { id: "plan-and-build", status: "published", revision: 2, node_count: 2 },
    });

    const exported = await icode(p, ["pipeline", "export", "plan-and-build"]);
    expect(exported.exitCode).toBe(0);
    const definition = JSON.parse(exported.stdout) as Record<string, unknown>;
    expect(definition).toMatchObject({ name: "Plan and build", failure_policy: "pause" });
    expect(definition).not.toHaveProperty("status");
    const out = await icode(p, ["pipeline", "export", "plan-and-build", "--out", "again.json"]);
    expect(out).toMatchObject({ exitCode: 0, stdout: "" });
    expect(readFileSync(join(p.dir, "again.json"), "utf8")).toBe(exported.stdout);
    // What export writes imports again.
    const reimported = json(await icode(p, ["pipeline", "import", "again.json", "--id", "second", "--json"]));
    expect(reimported).toMatchObject({
      version: 1,
      definition: { id: "second", status: "draft", revision: 1 },
    });

    const copied = await icode(p, [
      "pipeline",
      "copy",
      "builtin/review-fan-out",
      "--id",
      "my-review",
      "--name",
      "Mine",
    ]);
    expect(copied.stdout).toBe(
      "copied builtin/review-fan-out to my-review (draft, revision 1)\n  next: icode pipeline publish my-review\n",
    );
    const copy = json(await icode(p, ["pipeline", "show", "my-review", "--json"])).definition as Record<
      string,
      unknown
    >;
    expect(copy).toMatchObject({ name: "Mine", source: "user", locked: false, status: "draft" });
    const defaultCopy = json(await icode(p, ["pipeline", "copy", "builtin/docs-and-tests", "--json"]));
    expect(defaultCopy.definition).toMatchObject({
      id: "tests-and-docs-pass-copy",
      name: "Tests and docs pass (copy)",
    });

    expect(await icode(p, ["pipeline", "delete", "second"])).toMatchObject({
      exitCode: 0,
      stdout: "deleted second\n",
    });
    expect(json(await icode(p, ["pipeline", "delete", "my-review", "--json"]))).toEqual({
      version: 1,
      id: "my-review",
      deleted: true,
    });
    const ids = (json(await icode(p, ["pipeline", "list", "--json"])).definitions as { id: string }[]).map(
      (d) => d.id,
    );
    expect(ids).toEqual([...BUILTINS, "plan-and-build", "tests-and-docs-pass-copy"]);
  });

  it("refuses a stale --expected-revision with pipeline_revision_conflict, changing nothing", async () => {
    const p = withPipelines();
    await icode(p, ["pipeline", "import", "p.json"]);
    const stale = await icode(p, ["pipeline", "publish", "plan-and-build", "--expected-revision", "2"]);
    refused(
      stale,
      "pipeline_revision_conflict",
      "someone changed it first; see its revision with: icode pipeline show plan-and-build",
    );
    expect(stale.stderr).toContain("is at revision 1, not the expected revision 2");
    expect(stale.stdout).toBe("");
    const staleJson = await icode(p, [
      "pipeline",
      "delete",
      "plan-and-build",
      "--expected-revision",
      "5",
      "--json",
    ]);
    expect(refusedJson(staleJson, "pipeline_revision_conflict").hint).toContain(
      "icode pipeline show plan-and-build",
    );
    const still = json(await icode(p, ["pipeline", "show", "plan-and-build", "--json"])).definition;
    expect(still).toMatchObject({ status: "draft", revision: 1 });
    // Not a whole number ≥ 1: a usage error, exit 2.
    for (const bad of ["0", "x", "-1", "1.5"]) {
      const r = await icode(p, ["pipeline", "delete", "plan-and-build", `--expected-revision=${bad}`]);
      expect(r.exitCode, bad).toBe(2);
      expect(r.stderr).toContain("--expected-revision must be a whole number ≥ 1");
    }
  });

  it("refuses to publish or delete a locked built-in and says to copy it first", async () => {
    const p = withPipelines();
    for (const action of ["publish", "delete"]) {
      const r = await icode(p, ["pipeline", action, "builtin/review-fan-out"]);
      refused(r, "pipeline_definition_locked", "copy it first: icode pipeline copy builtin/review-fan-out");
    }
    const r = await icode(p, ["pipeline", "delete", "builtin/review-fan-out", "--json"]);
    expect(refusedJson(r, "pipeline_definition_locked").hint).toBe(
      "copy it first: icode pipeline copy builtin/review-fan-out",
    );
  });

  it("refuses unknown IDs, taken IDs, bad IDs, invalid drafts and files that do not load", async () => {
    const p = withPipelines();
    for (const args of [
      ["show", "nope"],
      ["export", "nope"],
      ["publish", "nope"],
      ["copy", "nope"],
      ["delete", "nope"],
    ]) {
      refused(
        await icode(p, ["pipeline", ...args]),
        "pipeline_definition_not_found",
        "list the stored pipelines with: icode pipeline list",
      );
    }
    expect(
      refusedJson(await icode(p, ["pipeline", "show", "nope", "--json"]), "pipeline_definition_not_found"),
    ).toMatchObject({
      hint: "list the stored pipelines with: icode pipeline list",
    });

    await icode(p, ["pipeline", "import", "p.json"]);
    refused(
      await icode(p, ["pipeline", "import", "p.json", "--id", "plan-and-build"]),
      "pipeline_definition_exists",
      /help: /,
    );
    refused(
      await icode(p, ["pipeline", "import", "p.json", "--id", "Bad ID"]),
      "pipeline_invalid_id",
      /help: /,
    );
    refused(
      await icode(p, ["pipeline", "copy", "plan-and-build", "--id", "a/b"]),
      "pipeline_invalid_id",
      /help: .*built-in/,
    );

    // A draft that loads but does not validate is stored, and refused when published, with its problems.
    const draft = await icode(p, ["pipeline", "import", "broken.json", "--id", "broken"]);
    expect(draft.exitCode, draft.stderr).toBe(0);
    const publish = await icode(p, ["pipeline", "publish", "broken"]);
    refused(publish, "pipeline_definition_invalid", /help: /);
    expect(publish.stderr).toContain(
      '  at /nodes/1/depends_on/1: node "build" depends on "nope", which is not a node of this pipeline [pipeline_unknown_dependency]',
    );
    const publishJson = refusedJson(
      await icode(p, ["pipeline", "publish", "broken", "--json"]),
      "pipeline_definition_invalid",
    );
    expect(publishJson.problems).toEqual([
      expect.objectContaining({ code: "pipeline_unknown_dependency", pointer: "/nodes/1/depends_on/1" }),
    ]);

    // A file that does not load is not stored: its problems at their line and column.
    const bad = project({ "bad.json": '{"name": "x", "nodes": []}\n' });
    const r = await icode(bad, ["pipeline", "import", "bad.json"]);
    refused(r, "pipeline_definition_invalid", /help: /);
    expect(r.stderr).toContain("./bad.json:1:24: error:");
    expect(r.stderr).toContain("[pipeline_no_nodes]");
    const missing = refusedJson(
      await icode(bad, ["pipeline", "import", "nope.json", "--json"]),
      "pipeline_definition_invalid",
    );
    expect(missing.problems).toEqual([expect.objectContaining({ code: "pipeline_file_not_found" })]);
    expect(json(await icode(bad, ["pipeline", "list", "--status", "draft", "--json"])).definitions).toEqual(
      [],
    );
  });

  it("refuses to write an export where it cannot, with output_write_failed", async () => {
    const p = withPipelines();
    const r = await icode(p, ["pipeline", "export", "builtin/review-fan-out", "--out", "no/such/dir/x.json"]);
    refused(r, "output_write_failed", /help: /);
  });

  it("lists its commands in --help, has --help for each, and suggests on a misspelling", async () => {
    const p = project();
    const help = await icode(p, ["pipeline", "--help"]);
    expect(help.exitCode).toBe(0);
    for (const name of ["list", "show", "validate", "import", "export", "publish", "copy", "delete"]) {
      expect(help.stdout).toMatch(new RegExp(`^ {2}${name}\\s`, "m"));
      const own = await icode(p, ["pipeline", name, "--help"]);
      expect(own.exitCode).toBe(0);
      expect(own.stdout).toContain(`icode pipeline ${name}`);
    }
    expect((await icode(p, ["--help"])).stdout).toMatch(/^ {2}pipeline\s/m);
    const typo = await icode(p, ["pipeline", "publsh", "x"]);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain("did you mean `publish`?");
    const optionTypo = await icode(p, ["pipeline", "list", "--stauts", "draft"]);
    expect(optionTypo.exitCode).toBe(2);
    expect(optionTypo.stderr).toContain("--status");
  });
});

/**
 * The run side through the built CLI, on runs created in the same store (`pipelinesFor` of the engine, as
 * another front end would): listing, inspecting and the control actions through the store.
 */
describe("icode pipeline runs, inspect and control actions", () => {
  async function withRun(definition = PIPELINE) {
    const p = project({ "p.json": definition });
    await icode(p, ["pipeline", "import", "p.json", "--id", "gated"]);
    const published = await icode(p, ["pipeline", "publish", "gated"]);
    expect(published.exitCode, published.stderr).toBe(0);
    const engine = await import("@icode/workflow-engine");
    const pipelines = engine.pipelinesFor({ cwd: p.dir, env: { CHRYS_HOME: p.home } });
    const run = await pipelines.start({ definitionId: "gated", taskInput: "ship it" });
    await pipelines.close();
    return { p, runId: run.run_id };
  }

  it("refuses to run a draft, and says to publish it", async () => {
    const p = withPipelines();
    await icode(p, ["pipeline", "import", "p.json"]);
    const r = await icode(p, ["pipeline", "run", "plan-and-build", "--input", "x"]);
    refused(r, "pipeline_definition_draft", "publish it first: icode pipeline publish plan-and-build");
    const j = await icode(p, ["pipeline", "run", "plan-and-build", "--input", "x", "--json"]);
    refusedJson(j, "pipeline_definition_draft");
    expect(json(await icode(p, ["pipeline", "runs", "--json"]))).toEqual({ version: 1, runs: [] });
    expect((await icode(p, ["pipeline", "runs"])).stdout).toBe(
      "No pipeline runs yet. Start one with: icode pipeline run ID --input TEXT\n",
    );
    refused(
      await icode(p, ["pipeline", "run", "nope", "--input", "x"]),
      "pipeline_definition_not_found",
      "list the stored pipelines with: icode pipeline list",
    );
    // --input and --input-file together, or a policy that does not exist: usage errors.
    expect((await icode(p, ["pipeline", "run", "x", "--input", "a", "--input-file", "f"])).exitCode).toBe(2);
    expect((await icode(p, ["pipeline", "run", "x", "--failure-policy", "sometimes"])).exitCode).toBe(2);
  });

  it("lists and inspects a run, in text and JSON", async () => {
    const { p, runId } = await withRun();
    const runs = json(await icode(p, ["pipeline", "runs", "--json"]));
    expect(runs.runs).toEqual([
      expect.objectContaining({
        run_id: runId,
        definition_id: "gated",
        state: "pending",
        task_input: "ship it",
      }),
    ]);
    expect((runs.runs as object[])[0]).not.toHaveProperty("definition");
    const text = await icode(p, ["pipeline", "runs"]);
    expect(text.stdout).toMatch(new RegExp(`^${runId}\\s+gated\\s+2\\s+pending\\s+pause\\s`, "m"));

    const inspected = json(await icode(p, ["pipeline", "inspect", runId, "--json"]));
    expect(inspected).toMatchObject({
      version: 1,
      run: { run_id: runId, state: "pending" },
      lease: null,
      attempts: [],
      commands: [],
      run_dir: join(p.home, "pipelines", "runs", runId),
    });
    expect(
      (inspected.nodes as { node_id: string; state: string }[]).map((n) => [n.node_id, n.state]),
    ).toEqual([
      ["plan", "pending"],
      ["build", "pending"],
    ]);
    const shown = await icode(p, ["pipeline", "inspect", runId]);
    expect(shown.stdout).toContain(`run ${runId} · pipeline gated (revision 2) · pending\n`);
    expect(shown.stdout).toContain("not driven by any process");
    expect(shown.stdout).toMatch(/^ {2}build\s+pending\s+0 attempts\s+-$/m);

    refused(
      await icode(p, ["pipeline", "inspect", "0".repeat(32)]),
      "pipeline_run_not_found",
      "list the pipeline runs with: icode pipeline runs",
    );
    refused(await icode(p, ["pipeline", "inspect", "nope"]), "pipeline_invalid_id", /./);
  });

  it("pauses and cancels through the store; refuses what the transition table forbids", async () => {
    const { p, runId } = await withRun();
    const paused = await icode(p, ["pipeline", "pause", runId]);
    expect(paused.exitCode, paused.stderr).toBe(0);
    expect(paused.stderr).toBe(`pause applied to run ${runId} (directly); the run is paused\n`);
    // Pausing a paused run is refused (pause: paused → refused).
    const again = await icode(p, ["pipeline", "pause", runId, "--json"]);
    expect(again.exitCode).toBe(1);
    expect(json(again)).toMatchObject({
      version: 1,
      action: "pause",
      result: { ok: false, code: "pipeline_action_not_allowed" },
      via: "direct",
      stop: null,
    });
    // Approving a node that is not waiting for approval is refused with the node's state.
    const early = await icode(p, ["pipeline", "approve", runId, "build"]);
    expect(early.exitCode).toBe(1);
    expect(early.stderr).toContain("[pipeline_action_not_allowed]");
    expect(early.stderr).toContain(`  help: see the run's states with: icode pipeline inspect ${runId}`);
    const unknown = await icode(p, ["pipeline", "skip", runId, "nope", "--note", "n"]);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("[pipeline_node_not_found]");

    const canceled = json(await icode(p, ["pipeline", "cancel", runId, "--json"]));
    expect(canceled).toMatchObject({ action: "cancel", result: { ok: true }, run: { state: "canceled" } });
    // Approve after cancel: refused.
    const late = await icode(p, ["pipeline", "approve", runId, "build"]);
    expect(late.exitCode).toBe(1);
    expect(late.stderr).toContain("while the run is canceled");
    const inspected = json(await icode(p, ["pipeline", "inspect", runId, "--json"]));
    expect((inspected.nodes as { state: string }[]).map((n) => n.state)).toEqual(["canceled", "canceled"]);
    expect((inspected.commands as { command: { action: string } }[]).map((c) => c.command.action)).toEqual([
      "pause",
      "pause",
      "approve_node",
      "skip_node",
      "cancel",
      "approve_node",
    ]);
  });

  it("exports a pipeline run with icode trajectory export --run, as JSON or Perfetto", async () => {
    const { p, runId } = await withRun();
    const r = await icode(p, ["trajectory", "export", "--run", runId, "--format", "json", "--out", "-"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const data = json(r);
    expect(data).toMatchObject({
      format: "icode-pipeline-trajectory",
      version: 1,
      run: { run_id: runId, definition_id: "gated", state: "pending", task_input: "ship it" },
    });
    expect(
      (data.nodes as { node_id: string; attempts: unknown[] }[]).map((n) => [n.node_id, n.attempts]),
    ).toEqual([
      ["plan", []],
      ["build", []],
    ]);
    const trace = await icode(p, [
      "trajectory",
      "export",
      "--run",
      runId,
      "--format",
      "perfetto",
      "--out",
      "t.json",
    ]);
    expect(trace).toMatchObject({ exitCode: 0, stdout: "" });
    const events = (
      JSON.parse(readFileSync(join(p.dir, "t.json"), "utf8")) as {
        traceEvents: { ph: string; args: { name?: string } }[];
      }
    ).traceEvents;
    expect(events.filter((e) => e.ph === "M").map((e) => e.args.name)).toEqual([
      `run ${runId} (pending)`,
      "run",
      "plan",
      "build",
    ]);

    const missing = await icode(p, [
      "trajectory",
      "export",
      "--run",
      "0".repeat(32),
      "--format",
      "json",
      "--out",
      "-",
    ]);
    refused(missing, "pipeline_run_not_found", "list the pipeline runs with: icode pipeline runs");
    const neither = await icode(p, ["trajectory", "export", "--format", "json", "--out", "-"]);
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toContain("give --session ID (a workflow session) or --run ID (a pipeline run)");
    const both = await icode(p, [
      "trajectory",
      "export",
      "--run",
      runId,
      "--session",
      "x",
      "--format",
      "json",
      "--out",
      "-",
    ]);
    expect(both.exitCode).toBe(2);
  });
});

/**
 * Runs driven by the built CLI, each node an attempt of the scripted ACP agent (`internal/acp-agent-double`)
 * through the real node executor: the agent's log counts every prompt it was sent, per node.
 */
describe("icode pipeline run with the scripted ACP agent", () => {
  interface AgentSpec {
    behaviour: HandoffBehaviour;
    delayMs?: number;
  }

  /** A project whose user profiles are scripted agents (`Ext` by default), and a pipeline file `p.json`. */
  function agentProject(
    nodes: object[],
    agents: Record<string, AgentSpec> = { Ext: { behaviour: "valid" } },
  ) {
    const p = project({ "p.json": `${JSON.stringify({ name: "Agents", nodes }, null, 2)}\n` });
    const log = join(p.dir, "agent.jsonl");
    for (const [name, spec] of Object.entries(agents)) {
      const script = writeAgentScript(
        join(p.dir, `${name}.script.json`),
        handoffScript(spec.behaviour, spec.delayMs === undefined ? {} : { delayMs: spec.delayMs }),
      );
      const { command, args } = agentCommand({ script });
      const profile = [
        `name: ${name}`,
        "acp:",
        `  command: ${JSON.stringify(command)}`,
        `  args: ${JSON.stringify(args)}`,
        "  env:",
        `    ACP_DOUBLE_LOG: ${JSON.stringify(log)}`,
      ].join("\n");
      writeFileSync(join(p.dir, `${name}.yaml`), `${profile}\n`);
      writeTreeIn(p.home, { [`agents/${name.toLowerCase()}.yaml`]: `${profile}\n` });
    }
    /** How many prompts each node was sent (one per attempt, plus correction rounds). */
    const prompts = (): Record<string, number> => {
      const out: Record<string, number> = {};
      if (!existsSync(log)) return out;
      for (const e of readAgentLog(log)) {
        if (e.event !== "request" || e.method !== "session/prompt") continue;
        const node = /^Node (\S+):/.exec(e.prompt ?? "")?.[1];
        if (node !== undefined) out[node] = (out[node] ?? 0) + 1;
      }
      return out;
    };
    return { p, prompts };
  }

  const node = (id: string, dependsOn: string[] = [], extra: object = {}) => ({
    id,
    name: id,
    profile_id: "Ext",
    prompt_template: `Node ${id}: {{task}} {{upstream_summaries}}`,
    depends_on: dependsOn,
    ...extra,
  });

  async function published(p: Project) {
    expect((await icode(p, ["pipeline", "import", "p.json", "--id", "agents"])).exitCode).toBe(0);
    const r = await icode(p, ["pipeline", "publish", "agents"]);
    expect(r.exitCode, r.stderr).toBe(0);
  }

  it("import → draft → run refused → publish → run: every node once, progress, the JSON result", async () => {
    const { p, prompts } = agentProject([node("plan"), node("build", ["plan"]), node("check", ["plan"])]);
    expect((await icode(p, ["pipeline", "import", "p.json", "--id", "agents"])).exitCode).toBe(0);
    refused(
      await icode(p, ["pipeline", "run", "agents", "--input", "ship"]),
      "pipeline_definition_draft",
      "publish it first: icode pipeline publish agents",
    );
    expect(json(await icode(p, ["pipeline", "publish", "agents", "--json"])).definition).toMatchObject({
      status: "published",
      revision: 2,
    });
    const r = await icode(p, ["pipeline", "run", "agents", "--input", "ship", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = json(r);
    expect(result).toMatchObject({
      version: 1,
      stop: "converged",
      run: { state: "succeeded", task_input: "ship" },
    });
    expect((result.nodes as { state: string; attempts: number }[]).map((n) => [n.state, n.attempts])).toEqual(
      [
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
      ],
    );
    expect(r.stderr).toMatch(/^▶ plan running$/m);
    expect(r.stderr).toMatch(/^✓ check succeeded$/m);
    expect(r.stderr).toMatch(/^run [0-9a-f]{32} succeeded · 3\/3 nodes succeeded$/m);
    expect(prompts()).toEqual({ plan: 1, build: 1, check: 1 });
    const runId = (result.run as { run_id: string }).run_id;
    const inspected = json(await icode(p, ["pipeline", "inspect", runId, "--json"]));
    expect((inspected.attempts as { status: string }[]).map((a) => a.status)).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
    expect(existsSync(join(p.home, "pipelines", "runs", runId, "events.jsonl"))).toBe(true);
    const exported = json(
      await icode(p, ["trajectory", "export", "--run", runId, "--format", "json", "--out", "-"]),
    );
    expect((exported.nodes as { attempts: unknown[] }[]).map((n) => n.attempts.length)).toEqual([1, 1, 1]);
  });

  it("a node that blocks pauses the run: exit 3 and a line saying how to continue; skip continues it", async () => {
    const { p, prompts } = agentProject(
      [node("plan"), node("build", ["plan"], { profile_id: "Blocker" }), node("ship", ["build"])],
      { Ext: { behaviour: "valid" }, Blocker: { behaviour: "blocked" } },
    );
    await published(p);
    const r = await icode(p, ["pipeline", "run", "agents", "--input", "go"]);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/✗ build attempt 1 blocked: .*\[pipeline_node_blocked\]/);
    const runId = /^run ([0-9a-f]{32}) /m.exec(r.stderr)![1]!;
    expect(r.stderr.trimEnd().split("\n").at(-1)).toBe(
      `run ${runId} paused · 1/3 nodes succeeded: paused; retry or skip build (icode pipeline retry ${runId} build), or: icode pipeline cancel ${runId}`,
    );
    const skipped = await icode(p, ["pipeline", "skip", runId, "build", "--note", "done by hand"]);
    expect(skipped.exitCode, skipped.stderr).toBe(0);
    expect(skipped.stderr).toContain(`skip_node build applied to run ${runId} (directly)`);
    expect(skipped.stderr).toMatch(/run [0-9a-f]{32} succeeded · 3\/3 nodes succeeded/);
    // The note became the skipped node's handoff summary, which the next node was given.
    const inspected = json(await icode(p, ["pipeline", "inspect", runId, "--json"]));
    expect((inspected.nodes as { node_id: string; handoff: unknown }[])[1]?.handoff).toEqual({
      summary: "done by hand",
      skipped: true,
    });
    expect(prompts().plan).toBe(1);
    expect(prompts().ship).toBe(1);
  });

  /** Starts `icode pipeline run` in the background. */
  function start(
    p: Project,
    args: string[],
  ): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: p.dir,
      env: { ...process.env, CHRYS_HOME: p.home, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.stdout!.resume();
    const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    return { child, stderr: () => err, exit };
  }

  it("Ctrl-C leaves the run resumable (exit 130, how to continue); resume finishes it without rerunning", async () => {
    const { p, prompts } = agentProject(
      [node("a"), node("b", ["a"], { profile_id: "Slow" }), node("c", ["b"])],
      {
        Ext: { behaviour: "valid" },
        Slow: { behaviour: "valid", delayMs: 4000 },
      },
    );
    await published(p);
    const run = start(p, ["pipeline", "run", "agents", "--input", "x"]);
    expect(await waitUntil(() => /▶ b running/.test(run.stderr()), 30_000)).toBe(true);
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(130);
    const runId = /^run ([0-9a-f]{32}) /m.exec(run.stderr())![1]!;
    expect(run.stderr().trimEnd().split("\n").at(-1)).toBe(
      `run ${runId} stopped here and left resumable; continue with: icode pipeline resume ${runId}`,
    );
    const between = json(await icode(p, ["pipeline", "inspect", runId, "--json"]));
    expect(between.lease).toBeNull();
    expect((between.nodes as { state: string }[]).map((n) => n.state)).toEqual([
      "succeeded",
      "ready",
      "pending",
    ]);
    const resumed = await icode(p, ["pipeline", "resume", runId], {}, 60_000);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/succeeded · 3\/3 nodes succeeded/);
    expect(prompts()).toEqual({ a: 1, b: 2, c: 1 });
  });

  it("a gate waits for icode pipeline approve from another terminal, which its live driver applies", async () => {
    const { p, prompts } = agentProject([node("plan"), node("ship", ["plan"], { requires_approval: true })]);
    await published(p);
    const run = start(p, ["pipeline", "run", "agents", "--input-file", "-"]);
    expect(await waitUntil(() => /⏸ ship waits for approval/.test(run.stderr()), 30_000)).toBe(true);
    const runId = /^run ([0-9a-f]{32}) /m.exec(run.stderr())![1]!;
    expect(run.stderr()).toContain(`⏸ ship waits for approval: icode pipeline approve ${runId} ship`);
    expect(prompts().ship).toBeUndefined();
    const approved = json(await icode(p, ["pipeline", "approve", runId, "ship", "--json"]));
    expect(approved).toMatchObject({
      action: "approve_node",
      result: { ok: true },
      via: "driver",
      stop: null,
    });
    expect(await run.exit).toBe(0);
    expect(run.stderr()).toMatch(/succeeded · 2\/2 nodes succeeded/);
    expect(prompts()).toEqual({ plan: 1, ship: 1 });
  });

  it("refuses a task over 20,000 characters, and reads the task from standard input", async () => {
    const { p } = agentProject([node("only")]);
    await published(p);
    const long = await icode(p, ["pipeline", "run", "agents", "--input", "x".repeat(20_001)]);
    refused(long, "pipeline_task_input_too_long", /./);
    const r = await runCliWithInput(
      p,
      ["pipeline", "run", "agents", "--input-file", "-", "--json"],
      "from stdin",
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(json(r).run).toMatchObject({ task_input: "from stdin", state: "succeeded" });
    const missing = await icode(p, ["pipeline", "run", "agents", "--input-file", "nope.txt"]);
    refused(missing, "input_file_unreadable", /./);
  });

  it("SIGKILL of the driving icode pipeline run mid 20-node pipeline: resume finishes, no finished node ran twice", async () => {
    // 4 layers of 5; every node of a layer depends on every node of the one above.
    const layers = [0, 1, 2, 3].map((l) => [0, 1, 2, 3, 4].map((i) => `l${l}n${i}`));
    const nodes = layers.flatMap((layer, l) => layer.map((id) => node(id, l === 0 ? [] : layers[l - 1]!)));
    const { p, prompts } = agentProject(nodes, { Ext: { behaviour: "valid", delayMs: 400 } });
    await published(p);
    const run = start(p, ["pipeline", "run", "agents", "--input", "x"]);
    // Kill it once the first layer has finished and the second is running.
    expect(
      await waitUntil(
        () => (run.stderr().match(/^✓ /gm) ?? []).length >= 5 && /▶ l1n/.test(run.stderr()),
        60_000,
      ),
    ).toBe(true);
    run.child.kill("SIGKILL");
    await run.exit;
    const runId = /^run ([0-9a-f]{32}) /m.exec(run.stderr())![1]!;
    const finishedBefore = (
      json(await icode(p, ["pipeline", "inspect", runId, "--json"])).nodes as {
        node_id: string;
        state: string;
      }[]
    )
      .filter((n) => n.state === "succeeded")
      .map((n) => n.node_id);
    expect(finishedBefore.length).toBeGreaterThanOrEqual(5);
    const resumed = await icode(p, ["pipeline", "resume", runId], {}, 120_000);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("waiting for it to end or its lease to expire");
    expect(resumed.stderr).toMatch(/succeeded · 20\/20 nodes succeeded/);
    const counts = prompts();
    for (const id of finishedBefore) expect(counts[id], id).toBe(1);
    for (const id of layers.flat()) expect(counts[id] ?? 0, id).toBeGreaterThanOrEqual(1);
    const final = json(await icode(p, ["pipeline", "inspect", runId, "--json"]));
    expect((final.nodes as { state: string }[]).every((n) => n.state === "succeeded")).toBe(true);
    // A node that was running when the driver died got a new attempt, counted; no node was prompted more
    // often than it had attempts (the killed attempt may have died before its prompt reached the agent).
    const interrupted = (final.attempts as { node_id: string; status: string }[]).filter(
      (a) => a.status === "interrupted",
    );
    expect(interrupted.length).toBeGreaterThanOrEqual(1);
    const attemptsOf = new Map(
      (final.nodes as { node_id: string; attempts: number }[]).map((n) => [n.node_id, n.attempts]),
    );
    for (const a of interrupted) expect(attemptsOf.get(a.node_id), a.node_id).toBe(2);
    for (const id of layers.flat()) expect(counts[id] ?? 0, id).toBeLessThanOrEqual(attemptsOf.get(id)!);
  }, 180_000);
});

function runCliWithInput(p: Project, args: string[], input: string) {
  return runCli(args, { cwd: p.dir, input, timeoutMs: 60_000 });
}

function writeTreeIn(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = join(root, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}
