/**
 * `icode trajectory export` on a finished session: the JSON trajectory (runs, nodes, attempts, timings)
 * and the Perfetto trace (a process per run, a track per node, `X` slices with attempts nested inside,
 * instant events for `ctx.emit`), and its argument errors.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tmpDir } from "@icode/test-utils";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { icode, type Project, project, type RunJson, readSession, runJson, SLOW } from "./run-helpers";

/** `prep` emits; `flaky` fails its first attempt (per run) and is retried; `loop` runs `step` twice. */
const TRACED = `import os

from chrys.workflows import NodeContext, Retry, WorkflowBuilder, WorkflowValue

wf = WorkflowBuilder("Traced")


def prep(value, ctx: NodeContext):
    ctx.emit("preparing " + value.text)
    return value.text


def flaky(value):
    flag = "flaky-" + value.text
    if not os.path.exists(flag):
        open(flag, "w").close()
        raise RuntimeError("first attempt fails")
    return "flaky ok"


def body(scope):
    step = scope.python("step", lambda value: value.text + "+")
    return step, step


a = wf.python("prep", prep)
b = wf.python("flaky", flaky, retry=Retry(max_attempts=2))
loop = wf.loop("loop", body, until=lambda value: value.text.endswith("++"), max_iterations=3)
wf.chain(a, b, loop)
wf.start(a)
wf.output(loop)
workflow = wf.build()
`;

const Timing = {
  start_ms: z.number().nullable(),
  end_ms: z.number().nullable(),
  duration_ms: z.number().nullable(),
};

const TrajectorySchema = z.object({
  format: z.literal("icode-workflow-trajectory"),
  version: z.literal(1),
  session: z.object({
    session_id: z.string(),
    workflow_id: z.string(),
    workflow_path: z.string(),
    source: z.string(),
    workspace: z.string(),
    created_at: z.string(),
  }),
  runs: z.array(
    z.object({
      run_id: z.string(),
      started_at: z.string(),
      outcome: z.string().nullable(),
      reason: z.string(),
      node_id: z.string(),
      error: z.string(),
      ...Timing,
      usage: z.unknown(),
      warnings: z.array(z.unknown()),
      nodes: z.array(
        z.object({
          activation_id: z.string(),
          node_id: z.string(),
          kind: z.string(),
          iteration: z.number(),
          loop_id: z.string().nullable(),
          status: z.enum([
            "running",
            "waiting_approval",
            "awaiting_retry",
            "completed",
            "failed",
            "skipped",
            "cancelled",
          ]),
          ...Timing,
          usage: z.unknown(),
          emits: z.array(z.unknown()),
          questions: z.array(z.unknown()),
          attempts: z.array(
            z.object({
              attempt: z.number(),
              status: z.enum(["running", "completed", "failed", "cancelled"]),
              error_class: z.string().nullable(),
              error: z.string().nullable(),
              ...Timing,
              usage: z.unknown(),
            }),
          ),
        }),
      ),
    }),
  ),
});

const TraceSchema = z.object({
  traceEvents: z.array(
    z.looseObject({
      ph: z.string(),
      name: z.string(),
      pid: z.number(),
      tid: z.number(),
      ts: z.number().optional(),
      dur: z.number().optional(),
      args: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
  displayTimeUnit: z.literal("ms"),
});

describe("icode trajectory export", SLOW, () => {
  let p: Project;
  let runs: RunJson[];

  beforeAll(async () => {
    p = project({ ".chrys/workflows/traced.py": TRACED });
    const first = await runJson(p, "traced", ["--trust", "--input", "one"]);
    expect(first.exitCode, first.stderr).toBe(0);
    const second = await runJson(p, "traced", ["-s", first.json.session_id!, "--input", "two"]);
    expect(second.exitCode, second.stderr).toBe(0);
    runs = [first.json, second.json];
  }, SLOW.timeout);

  it("--format json: the session, its runs in start order, nodes per activation with their attempts and timings", async () => {
    const sid = runs[0]!.session_id!;
    const r = await icode(p, [
      "trajectory",
      "export",
      "--session",
      sid,
      "--format",
      "json",
      "--out",
      "trajectory.json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const t = TrajectorySchema.parse(JSON.parse(readFileSync(join(p.dir, "trajectory.json"), "utf8")));
    const session = readSession(p.home, sid);
    expect(t.session).toEqual({
      session_id: sid,
      workflow_id: "traced",
      workflow_path: session["workflow_path"],
      source: "project",
      workspace: p.dir,
      created_at: session["created_at"],
    });
    expect(t.runs.map((run) => run.run_id)).toEqual(runs.map((run) => run.run_id));
    for (const run of t.runs) {
      expect(run).toMatchObject({
        outcome: "completed",
        reason: "",
        node_id: "",
        error: "",
        usage: null,
        warnings: [],
      });
      expect(run.end_ms! - run.start_ms!).toBe(run.duration_ms);
      expect(run.nodes.map((n) => n.activation_id)).toEqual([
        "prep@iter#1",
        "flaky@iter#1",
        "loop@iter#1",
        "step@iter#1",
        "step@iter#2",
      ]);
      for (const node of run.nodes) {
        expect(node.status).toBe("completed");
        expect(node.start_ms!).toBeGreaterThanOrEqual(run.start_ms!);
        expect(node.end_ms!).toBeLessThanOrEqual(run.end_ms!);
        expect(node.end_ms! - node.start_ms!).toBe(node.duration_ms);
        expect(node.usage).toBeNull();
      }
      const prep = run.nodes[0]!;
      expect(prep.emits).toHaveLength(1);
      expect(JSON.stringify(prep.emits[0])).toContain("preparing");
      const flaky = run.nodes[1]!;
      expect(flaky.attempts.map((a) => [a.attempt, a.status, a.error_class])).toEqual([
        [1, "failed", "exception"],
        [2, "completed", null],
      ]);
      expect(flaky.attempts[0]!.error).toContain("first attempt fails");
      expect(flaky.attempts[0]!.end_ms!).toBeLessThanOrEqual(flaky.attempts[1]!.start_ms!);
      const steps = run.nodes.filter((n) => n.node_id === "step");
      expect(steps.map((n) => [n.iteration, n.loop_id])).toEqual([
        [1, "loop"],
        [2, "loop"],
      ]);
      expect(run.nodes[2]).toMatchObject({ kind: "loop", loop_id: null });
    }
    expect(t.runs[0]!.start_ms!).toBeLessThanOrEqual(t.runs[1]!.start_ms!);
  });

  it("--format perfetto: a process per run, a track per node, X slices with attempts nested, emits as instants", async () => {
    const sid = runs[0]!.session_id!;
    const json = await icode(p, [
      "trajectory",
      "export",
      "--session",
      sid,
      "--format",
      "json",
      "--out",
      "t.json",
    ]);
    expect(json.exitCode).toBe(0);
    const t = TrajectorySchema.parse(JSON.parse(readFileSync(join(p.dir, "t.json"), "utf8")));
    const r = await icode(p, [
      "trajectory",
      "export",
      "--session",
      sid,
      "--format",
      "perfetto",
      "--out",
      "trace.json",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const trace = TraceSchema.parse(JSON.parse(readFileSync(join(p.dir, "trace.json"), "utf8")));
    const events = trace.traceEvents;

    const processes = events.filter((e) => e.ph === "M" && e.name === "process_name");
    expect(processes.map((e) => e.args?.["name"])).toEqual(
      runs.map((run) => `run ${run.run_id} (completed)`),
    );
    for (const [index, proc] of processes.entries()) {
      const pid = proc.pid;
      const run = t.runs[index]!;
      const threads = new Map(
        events
          .filter((e) => e.pid === pid && e.ph === "M" && e.name === "thread_name")
          .map((e) => [e.tid, String(e.args?.["name"])]),
      );
      expect([...threads.values()].sort()).toEqual(["flaky", "loop", "prep", "run", "step"]);
      const tidOf = (name: string) => [...threads.entries()].find(([, n]) => n === name)![0];
      const slices = events.filter((e) => e.pid === pid && e.ph === "X");
      // The run's slice, in microseconds.
      const runSlice = slices.filter((e) => e.tid === tidOf("run"));
      expect(runSlice).toHaveLength(1);
      expect(runSlice[0]!.ts).toBe(run.start_ms! * 1000);
      expect(runSlice[0]!.dur).toBe(run.duration_ms! * 1000);
      // The flaky node: one activation slice with both attempts inside it.
      const flaky = slices.filter((e) => e.tid === tidOf("flaky"));
      expect(flaky).toHaveLength(3);
      const outer = flaky.reduce((a, b) => (b.dur! > a.dur! ? b : a));
      for (const inner of flaky) {
        expect(inner.ts!).toBeGreaterThanOrEqual(outer.ts!);
        expect(inner.ts! + inner.dur!).toBeLessThanOrEqual(outer.ts! + outer.dur!);
      }
      // Two loop iterations of `step`: two activations, each with one attempt.
      expect(slices.filter((e) => e.tid === tidOf("step"))).toHaveLength(4);
      const instants = events.filter((e) => e.pid === pid && e.ph === "i");
      expect(instants.some((e) => e.tid === tidOf("prep") && JSON.stringify(e).includes("preparing"))).toBe(
        true,
      );
    }
  });

  it("refuses a format other than json or perfetto with exit 2, and writes nothing", async () => {
    const sid = runs[0]!.session_id!;
    for (const format of ["csv", "JSON", ""]) {
      const r = await icode(p, [
        "trajectory",
        "export",
        "--session",
        sid,
        "--format",
        format,
        "--out",
        "bad.out",
      ]);
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("--format");
    }
    const missing = await icode(p, ["trajectory", "export", "--session", sid, "--format", "json"]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("--out");
    expect(existsSync(join(p.dir, "bad.out"))).toBe(false);
  });

  it("an unknown session is an error (exit 1) and writes nothing", async () => {
    const r = await icode(p, [
      "trajectory",
      "export",
      "--session",
      "0b7c2a4e-1f3d-4c5b-9a8e-7d6c5b4a3f21",
      "--format",
      "json",
      "--out",
      "none.json",
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("0b7c2a4e-1f3d-4c5b-9a8e-7d6c5b4a3f21");
    expect(existsSync(join(p.dir, "none.json"))).toBe(false);
  });

  it("--out to a missing folder, a folder or a read-only folder: a coded error with a hint, exit 1, no stack trace", async () => {
    const sid = runs[0]!.session_id!;
    const exportTo = (out: string, ids?: { uid: number; gid: number }) =>
      runCli(["trajectory", "export", "--session", sid, "--format", "json", "--out", out], {
        cwd: p.dir,
        env: { CHRYS_HOME: p.home },
        ...ids,
      });
    const cases: [string, RegExp, RegExp][] = [
      [
        "no/such/folder/x.json",
        /does not exist \(ENOENT\)/,
        /help: create it first \(mkdir -p .*no\/such\/folder\)/,
      ],
      [".", /it is a folder \(EISDIR\)/, /help: name a file, for example /],
    ];
    for (const [out, message, hint] of cases) {
      const r = await exportTo(out);
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^icode: cannot write the export to .* \[output_write_failed\]\n/);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(hint);
      expect(r.stderr).not.toContain("internal error");
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    // Root writes anywhere: the read-only folder is tried as `nobody`, over a copy of the records it owns.
    const copy = tmpDir("icode-export-ro-");
    cpSync(p.dir, copy, { recursive: true });
    mkdirSync(join(copy, "readonly"));
    const ids = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
    if (ids !== undefined) execFileSync("chown", ["-R", "65534:65534", copy]);
    chmodSync(join(copy, "readonly"), 0o555);
    const ro = await runCli(
      ["trajectory", "export", "--session", sid, "--format", "json", "--out", "readonly/x.json"],
      { cwd: copy, env: { CHRYS_HOME: join(copy, ".home") }, ...ids },
    );
    expect(ro.exitCode, ro.stderr).toBe(1);
    expect(ro.stderr).toMatch(/the folder cannot be written \(EACCES\) \[output_write_failed\]/);
    expect(ro.stderr).toContain("help: name a file in a folder you can write, or '-' for standard output");
  });

  it("--out - writes the export to standard output", async () => {
    const sid = runs[0]!.session_id!;
    const r = await icode(p, ["trajectory", "export", "--session", sid, "--format", "json", "--out", "-"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const data = JSON.parse(r.stdout) as { format: string; runs: { run_id: string }[] };
    expect(data.format).toBe("icode-workflow-trajectory");
    expect(data.runs.map((run) => run.run_id)).toEqual(runs.map((run) => run.run_id));
    expect(existsSync(join(p.dir, "-"))).toBe(false);
  });
});
