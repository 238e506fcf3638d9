/**
 * History from the CLI (issue 17, item 17): `icode sessions list`, `icode runs list|show|logs` in text and
 * JSON, the run ID and folder in the header of `workflow run`, the note when an earlier run was marked
 * orphaned; and failures that show where (item 18): the user frames of a failing node's traceback.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  icode,
  type Project,
  parseErrorJson,
  project,
  type RunJson,
  runDir,
  runJson,
  SLOW,
  startCli,
  WAIT_HELPER,
  waitForFile,
} from "./run-helpers";

const STEPS = `from chrys.workflows import NodeContext, WorkflowBuilder


def helper(text):
    raise ValueError("cannot use " + text)


def a(value, ctx: NodeContext):
    print("hello from a")
    ctx.emit("half way")
    return value.text


def b(value):
    return helper(value.text)


wf = WorkflowBuilder("Steps")
na = wf.python("a", a)
nb = wf.python("b", b)
wf.edge(na, nb)
wf.start(na)
wf.output(nb)
workflow = wf.build()
`;
const HELPER_LINE = 5; // `raise ValueError(...)` above
const B_LINE = 15; // `return helper(value.text)`

const BLOCKS = `from chrys.workflows import WorkflowBuilder
${WAIT_HELPER}

def block(value):
    if value.text == "block":
        wait_for_parent("started.marker", 20)
    return value.text


wf = WorkflowBuilder("Blocks")
node = wf.python("block", block)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

const RunSummary = z.strictObject({
  run_id: z.string(),
  session_id: z.string(),
  workflow_id: z.string(),
  state: z.enum(["running", "finished", "interrupted"]),
  outcome: z.string().nullable(),
  reason: z.string(),
  started_at: z.string(),
  duration: z.number().nullable(),
  location: z.string().nullable(),
});

describe("icode sessions list, icode runs list|show|logs", SLOW, () => {
  let p: Project;
  let failed: RunJson;
  let echoed: RunJson;
  let failedText: { stderr: string };

  beforeAll(async () => {
    p = project({ ".chrys/workflows/steps.py": STEPS });
    const first = await runJson(p, "steps", ["--trust", "--input", "x"]);
    expect(first.exitCode).toBe(1);
    failed = first.json;
    const second = await runJson(p, "echo", ["--input", "hi"]);
    expect(second.exitCode).toBe(0);
    echoed = second.json;
    failedText = await icode(p, ["workflow", "run", "steps", "--input", "y", "-s", failed.session_id!]);
  }, SLOW.timeout);

  it("sessions list: most recently used first, with their runs, in text and JSON", async () => {
    const json = await icode(p, ["sessions", "list", "--json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const out = z
      .strictObject({
        version: z.literal(1),
        sessions: z.array(z.looseObject({ session_id: z.string(), runs: z.number() })),
      })
      .parse(JSON.parse(json.stdout));
    expect(out.sessions.map((s) => [s.session_id, s.runs])).toEqual([
      [failed.session_id, 2],
      [echoed.session_id, 1],
    ]);
    const text = await icode(p, ["sessions", "list"]);
    expect(text.stdout.split("\n")[0]).toMatch(/^Session +Workflow +Runs +Updated \(UTC\) +Workspace$/);
    expect(text.stdout).toContain(failed.session_id!);
  });

  it("runs list: run ID, workflow, outcome, start and duration, newest first; -s keeps one session", async () => {
    const json = await icode(p, ["runs", "list", "--json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const { runs } = z
      .strictObject({ version: z.literal(1), runs: z.array(RunSummary) })
      .parse(JSON.parse(json.stdout));
    expect(runs).toHaveLength(3);
    expect(runs[1]).toMatchObject({
      run_id: echoed.run_id,
      workflow_id: "echo",
      outcome: "completed",
      state: "finished",
    });
    expect(runs[2]).toMatchObject({ run_id: failed.run_id, workflow_id: "steps", outcome: "node_failed" });
    expect(runs[2]!.location).toBe(runDir(p.home, failed.session_id!, failed.run_id));
    expect(runs.every((r) => r.duration !== null && r.duration >= 0)).toBe(true);
    const one = await icode(p, ["runs", "list", "-s", echoed.session_id!, "--json"]);
    expect((JSON.parse(one.stdout) as { runs: { run_id: string }[] }).runs.map((r) => r.run_id)).toEqual([
      echoed.run_id,
    ]);
    const text = await icode(p, ["runs", "list"]);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^Run +Workflow +Outcome +Started \(UTC\) +Duration +Session$/);
    expect(lines[3]).toMatch(
      new RegExp(
        `^${failed.run_id} +steps +node_failed +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +[\\d.]+ s +${failed.session_id}$`,
      ),
    );
  });

  it("runs show: nodes, attempts, outcome, the failure with its traceback, the run folder", async () => {
    const json = await icode(p, ["runs", "show", failed.run_id, "--json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const details = JSON.parse(json.stdout) as {
      version: number;
      run: { outcome: string; location: string };
      node_id: string;
      inspection: { activations: { node_id: string; state: string; attempts: number }[] };
      failures: {
        node_id: string;
        final: boolean;
        error: { class: string; message: string; traceback: string };
      }[];
    };
    expect(details.version).toBe(1);
    expect(details.run).toMatchObject({
      outcome: "node_failed",
      location: runDir(p.home, failed.session_id!, failed.run_id),
    });
    expect(details.node_id).toBe("b");
    expect(details.inspection.activations.map((a) => [a.node_id, a.state, a.attempts])).toEqual([
      ["a", "completed", 1],
      ["b", "failed", 1],
    ]);
    expect(details.failures).toMatchObject([
      { node_id: "b", final: true, error: { class: "exception", message: "ValueError: cannot use x" } },
    ]);
    expect(details.failures[0]!.error.traceback).toContain(`line ${HELPER_LINE}, in helper`);

    const text = await icode(p, ["runs", "show", failed.run_id]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(`run ${failed.run_id} · workflow steps · session ${failed.session_id}`);
    expect(text.stdout).toContain("outcome: node_failed · node b: ValueError: cannot use x");
    expect(text.stdout).toContain(`folder: ${runDir(p.home, failed.session_id!, failed.run_id)}`);
    expect(text.stdout).toMatch(/\n {2}✓ a +completed +1 attempt\n {2}✗ b +failed +1 attempt\n/);
    expect(text.stdout).toContain("  b attempt 1 (exception): ValueError: cannot use x");
    expect(text.stdout).toContain(`    at ./.chrys/workflows/steps.py:${HELPER_LINE} in helper`);
  });

  it("runs logs: what nodes printed and emitted; --node keeps one node", async () => {
    const text = await icode(p, ["runs", "logs", failed.run_id]);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      "── a@iter#1 attempt 1: print() ──\n  | hello from a\n── ctx.emit() ──\n  a@iter#1: half way\n",
    );
    const onlyB = await icode(p, ["runs", "logs", failed.run_id, "--node", "b"]);
    expect(onlyB).toMatchObject({ exitCode: 0, stdout: "" });
    const json = await icode(p, ["runs", "logs", failed.run_id, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      version: 1,
      run_id: failed.run_id,
      captured: [
        { node_id: "a", attempt: 1, phase: "node", stdout: { text: "hello from a\n", truncated: false } },
      ],
      emits: [{ node_id: "a", text: "half way" }],
    });
  });

  it("an unknown run is run_not_found (exit 1) with a hint, in text and JSON", async () => {
    const missing = "0123456789abcdef0123456789abcdef";
    const text = await icode(p, ["runs", "show", missing]);
    expect(text.exitCode).toBe(1);
    expect(text.stderr).toBe(
      `error: no recorded run ${missing} [run_not_found]\n  help: list runs with: icode runs list\n`,
    );
    expect(parseErrorJson(await icode(p, ["runs", "logs", missing, "--json"]), "run_not_found").hint).toBe(
      "list runs with: icode runs list",
    );
  });

  it("a failing node's text mode shows its error and the user frames of its traceback (item 18)", () => {
    const lines = failedText.stderr.split("\n");
    const failure = lines.indexOf("✗ Workflow failed: node 'b' failed: ValueError: cannot use y");
    expect(failure).toBeGreaterThan(-1);
    expect(lines.slice(failure + 1, failure + 5)).toEqual([
      `  at ./.chrys/workflows/steps.py:${B_LINE} in b`,
      `    ${B_LINE} | return helper(value.text)`,
      `  at ./.chrys/workflows/steps.py:${HELPER_LINE} in helper`,
      `    ${HELPER_LINE} | raise ValueError("cannot use " + text)`,
    ]);
    expect(failedText.stderr).not.toContain("_runtime");
  });

  it("the header of workflow run names the run and its folder", () => {
    const runLine = failedText.stderr.split("\n")[1]!;
    expect(runLine).toMatch(/^ {2}run [0-9a-f]{32} · /);
    const runId = runLine.slice(6, 38);
    expect(runLine).toBe(`  run ${runId} · ${runDir(p.home, failed.session_id!, runId)}`);
  });
});

describe("icode workflow run: the note about orphaned runs", SLOW, () => {
  it("says when it marked an earlier run of the session orphaned", async () => {
    const p = project({ ".chrys/workflows/blocks.py": BLOCKS });
    const running = startCli(p, ["workflow", "run", "blocks", "--trust", "--json", "--input", "block"]);
    await waitForFile(join(p.dir, "started.marker"), running);
    running.child.kill("SIGKILL");
    await running.done;
    const sessions = JSON.parse((await icode(p, ["sessions", "list", "--json"])).stdout) as {
      sessions: { session_id: string }[];
    };
    const sid = sessions.sessions[0]!.session_id;
    const before = JSON.parse((await icode(p, ["runs", "list", "--json"])).stdout) as {
      runs: { run_id: string; state: string }[];
    };
    expect(before.runs).toMatchObject([{ state: "interrupted" }]);
    const r = await icode(p, ["workflow", "run", "blocks", "-s", sid, "--input", "quick"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `\\nnote: marked run ${before.runs[0]!.run_id} of this session orphaned: its process \\(pid \\d+\\) ended without finishing it\\n`,
      ),
    );
    const after = JSON.parse((await icode(p, ["runs", "list", "--json"])).stdout) as {
      runs: { run_id: string; outcome: string }[];
    };
    expect(after.runs.find((x) => x.run_id === before.runs[0]!.run_id)?.outcome).toBe("orphaned");
  });
});
