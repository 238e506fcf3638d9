/**
 * Faults of the run records, reproduced through the built CLI (issue 17, items 13 and 14):
 * - a storage failure at the end (the outputs cannot be written) and one mid-run (a node's captured output
 *   cannot be written) are recorded as the run's last `workflow_run_end` while the event log can still be
 *   written, so the records, `icode runs show` and `trajectory export` say `storage_failed` as the CLI does,
 *   and a later `-s` run does not mark the run `orphaned`;
 * - a run folder moved away mid-run still gets its end through the log that is open (docs/records.md says
 *   what is left when nothing at all can be written);
 * - a crash between writing the run folder and listing it in `session.json` leaves a session that `-s`
 *   restores, with the run marked `orphaned`; what a crash leaves half-made (a `.partial` run folder, the
 *   temporary file of an atomic write, an empty run folder) is removed by the next `-s` run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  icode,
  ofType,
  project,
  readEvents,
  readSession,
  runDir,
  runIds,
  runJson,
  SLOW,
  sessionIds,
  sessionsDir,
  startCli,
  WAIT_HELPER,
  waitForFile,
} from "./run-helpers";

const HEAD = `import glob
import os

from chrys.workflows import WorkflowBuilder


def run_dir(home):
    [found] = glob.glob(os.path.join(home, "sessions", "*", "workflows", "[0-9a-f]*"))
    return found
`;

/** `first` sabotages the run folder as `how` says (the configuration directory is the input), `second` prints. */
function sabotaging(how: string): string {
  return `${HEAD}

def first(value):
    folder = run_dir(value.text)
${how}
    return "first"


def second(value):
    print("second printed")
    return "second"


wf = WorkflowBuilder("Sabotage")
a = wf.python("first", first)
b = wf.python("second", second)
wf.edge(a, b)
wf.start(a)
wf.output(b)
workflow = wf.build()
`;
}

/** The last `workflow_run_end` of a run's log: the run's outcome as the records say it. */
function recordedEnd(home: string, sessionId: string, runId: string) {
  const ends = ofType(
    readEvents(join(runDir(home, sessionId, runId), "events.jsonl"), runId),
    "workflow_run_end",
  );
  expect(ends.length).toBeGreaterThan(0);
  return ends[ends.length - 1]!;
}

/** Canonical JSON (sorted keys at every level, compact), as the records are written. */
function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted(value));
}

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid!;
}

describe.concurrent("storage_failed reaches the records (item 13)", SLOW, () => {
  it.each([
    [
      "at the end (outputs.json cannot be written)",
      '    os.mkdir(os.path.join(folder, "outputs.json"))',
      "outputs.json",
    ],
    [
      "mid-run, with the event log still writable (nodes/ cannot be made)",
      '    open(os.path.join(folder, "nodes"), "w").close()',
      "nodes",
    ],
  ])(
    "a failure %s: events.jsonl, runs show and trajectory export say storage_failed; -s does not orphan it",
    async (_, how, blocked) => {
      const p = project({ ".chrys/workflows/sabotage.py": sabotaging(how) });
      const r = await runJson(p, "sabotage", ["--trust", "--input", p.home]);
      expect(r.exitCode).toBe(1);
      expect(r.json.outcome).toBe("storage_failed");
      const sid = r.json.session_id!;
      const end = recordedEnd(p.home, sid, r.json.run_id);
      expect(end).toMatchObject({ outcome: "storage_failed", error: r.json.error });
      // What a full disk leaves: the file that could not be written is missing (here: what was put in its
      // way is taken away again, so the rest of the record reads back).
      rmSync(join(runDir(p.home, sid, r.json.run_id), blocked), { recursive: true, force: true });

      const show = JSON.parse((await icode(p, ["runs", "show", r.json.run_id, "--json"])).stdout) as {
        run: { outcome: string };
      };
      expect(show.run.outcome).toBe("storage_failed");
      const exported = await icode(p, [
        "trajectory",
        "export",
        "--session",
        sid,
        "--format",
        "json",
        "--out",
        "-",
      ]);
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect((JSON.parse(exported.stdout) as { runs: { outcome: string }[] }).runs).toMatchObject([
        { outcome: "storage_failed" },
      ]);

      // The next run of the session finds an ended run: nothing to recover.
      const next = await icode(p, [
        "workflow",
        "run",
        "sabotage",
        "-s",
        sid,
        "--input",
        "/nowhere",
        "--json",
      ]);
      expect(next.stderr).not.toContain("orphaned");
      expect(recordedEnd(p.home, sid, r.json.run_id).outcome).toBe("storage_failed");
    },
  );

  it("the run folder moved away mid-run: the end still reaches its open log, so nothing is orphaned later", async () => {
    const p = project({
      ".chrys/workflows/sabotage.py": sabotaging(
        '    os.rename(folder, folder + ".moved")\n    open(folder, "w").close()',
      ),
    });
    const r = await runJson(p, "sabotage", ["--trust", "--input", p.home]);
    expect(r.exitCode).toBe(1);
    expect(r.json.outcome).toBe("storage_failed");
    const sid = r.json.session_id!;
    const dir = runDir(p.home, sid, r.json.run_id);
    const moved = readEvents(join(`${dir}.moved`, "events.jsonl"), r.json.run_id);
    expect(ofType(moved, "workflow_run_end").at(-1)).toMatchObject({ outcome: "storage_failed" });
    renameSync(dir, `${dir}.file`);
    renameSync(`${dir}.moved`, dir);
    const next = await icode(p, ["workflow", "run", "sabotage", "-s", sid, "--input", "/nowhere"]);
    expect(next.stderr).not.toContain("orphaned");
    expect(recordedEnd(p.home, sid, r.json.run_id).outcome).toBe("storage_failed");
  });
});

const BLOCKS = `import os

from chrys.workflows import WorkflowBuilder
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

describe.concurrent("crashes while a run is being set up (item 14)", SLOW, () => {
  it("a crash before session.json lists the run: -s restores the session and marks the run orphaned", async () => {
    const p = project({ ".chrys/workflows/blocks.py": BLOCKS });
    const running = startCli(p, ["workflow", "run", "blocks", "--trust", "--json", "--input", "block"]);
    await waitForFile(join(p.dir, "started.marker"), running);
    running.child.kill("SIGKILL");
    await running.done;
    const [sid] = sessionIds(p.home);
    const [crashed] = runIds(p.home, sid!);
    // The state that crash leaves: the run folder whole, the session file not listing it yet.
    const sessionFile = join(sessionsDir(p.home), sid!, "session.json");
    const session = readSession(p.home, sid!);
    writeFileSync(sessionFile, canonicalJson({ ...session, runs: [] }));
    expect(readSession(p.home, sid!)["runs"]).toEqual([]);

    const r = await runJson(p, "blocks", ["-s", sid!, "--input", "quick"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.session_id).toBe(sid);
    expect(r.stderr).toContain(`note: marked run ${crashed} of this session orphaned`);
    expect(recordedEnd(p.home, sid!, crashed!).outcome).toBe("orphaned");
    const listed = JSON.parse((await icode(p, ["runs", "list", "-s", sid!, "--json"])).stdout) as {
      runs: { run_id: string; outcome: string }[];
    };
    expect(listed.runs.map((x) => [x.run_id, x.outcome])).toEqual([
      [r.json.run_id, "completed"],
      [crashed, "orphaned"],
    ]);
  });

  it("a crash just before run.json: the half-made run folder and temporary files are removed by the next -s run", async () => {
    const p = project();
    const first = await runJson(p, "echo", ["--input", "one"]);
    expect(first.exitCode, first.stderr).toBe(0);
    const sid = first.json.session_id!;
    const session = join(sessionsDir(p.home), sid);
    const runs = join(session, "workflows");
    const pid = deadPid();
    const halfId = "f".repeat(32);
    const emptyId = "e".repeat(32);
    // What a process that died while creating a run leaves: its run folder under construction (with the
    // temporary file of the header's atomic write), a temporary session file, and (from older versions of
    // the records) an empty run folder.
    mkdirSync(join(runs, `.${halfId}.${pid}.partial`));
    writeFileSync(join(runs, `.${halfId}.${pid}.partial`, `.run.json.${pid}.0123456789ab.tmp`), "{");
    writeFileSync(join(session, `.session.json.${pid}.0123456789ab.tmp`), "{");
    writeFileSync(join(runDir(p.home, sid, first.json.run_id), `.outputs.json.${pid}.0123456789ab.tmp`), "");
    mkdirSync(join(runs, emptyId));

    const listedBefore = await icode(p, ["runs", "list", "-s", sid, "--json"]);
    expect(listedBefore.exitCode, listedBefore.stderr).toBe(0);
    const second = await runJson(p, "echo", ["-s", sid, "--input", "two"]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(readdirSync(runs).sort()).toEqual([first.json.run_id, second.json.run_id].sort());
    expect(readdirSync(session).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(readdirSync(runDir(p.home, sid, first.json.run_id)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(existsSync(join(runs, emptyId))).toBe(false);
  });
});
