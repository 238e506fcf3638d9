/**
 * `icode workflow run` when things go wrong: failing nodes, retries, questions the CLI cannot answer, values
 * that cannot be serialized, the run deadline, bad `--timeout` values, unknown IDs, a worker that dies, the
 * CLI killed or interrupted in the middle of a node, and run records that can no longer be written.
 * Each test checks the exit code, stdout, stderr and the events of the run record.
 */
import { existsSync, readdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  icode,
  ofType,
  parseErrorJson,
  parseRunJson,
  project,
  readEvents,
  readRun,
  readSession,
  recordOf,
  runDir,
  runEnd,
  runIds,
  runJson,
  SLOW,
  sessionIds,
  startCli,
  WAIT_HELPER,
  waitForFile,
} from "./run-helpers";

const HEAD = "from chrys.workflows import NodeContext, Retry, WorkflowBuilder, WorkflowValue\n";

/** One workflow per file: a `first` node that completes (an output), then `node` built from `body`. */
function twoStep(title: string, body: string, options = ""): string {
  return `${HEAD}
import os
import signal
import sys
import time

wf = WorkflowBuilder(${JSON.stringify(title)})


def first(value):
    return "first done"


${body}


a = wf.python("first", first)
b = wf.python("node", node${options})
wf.edge(a, b)
wf.start(a)
wf.output(a)
wf.output(b)
workflow = wf.build()
`;
}

const RAISES = twoStep(
  "Raises",
  `def node(value):
    raise ValueError("boom from node")`,
);

const FLAKY = twoStep(
  "Flaky",
  `def node(value):
    count = int(open("attempts.txt").read()) + 1 if os.path.exists("attempts.txt") else 1
    with open("attempts.txt", "w") as handle:
        handle.write(str(count))
    if count < 3:
        raise RuntimeError("attempt %d fails" % count)
    return "succeeded on attempt %d" % count`,
  ", retry=Retry(max_attempts=3)",
);

const ASKS = twoStep(
  "Asks",
  `async def node(value, ctx: NodeContext):
    name = await ctx.ask("What is your name?")
    return "hello " + name`,
  ", retry=Retry(max_attempts=3)",
);

const SET_DATA = twoStep(
  "Set data",
  String.raw`def node(value):
    with open("calls.txt", "a") as handle:
        handle.write("call\n")
    return WorkflowValue("x", data={1, 2})`,
  ", retry=Retry(max_attempts=3)",
);

const SLEEPS = twoStep(
  "Sleeps",
  `def node(value):
    if value.text == "first done" and not os.path.exists("quick.flag"):
        open("quick.flag", "w").close()
        return "quick"
    time.sleep(30)
    return "woke up"`,
);

const KILLS = twoStep(
  "Kills",
  `def node(value):
    os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(30)
    return "unreachable"`,
);

/** Blocks (until the CLI is gone, at most 20 s) when the input is "block"; returns at once otherwise. */
const BLOCKS = twoStep(
  "Blocks",
  `${WAIT_HELPER}

def node(value):
    if value.text == "first done" and os.path.exists("block.flag"):
        os.remove("block.flag")
        wait_for_parent("started.marker", 20)
        return "unblocked"
    return "quick"`,
);

/**
 * Moves its own run folder away (root ignores permissions, so "unwritable" is made this way) and puts a
 * regular file in its place. The configuration directory comes as the input; `after` runs next.
 */
function sabotage(after: string): string {
  return `${HEAD}
import glob
import os

wf = WorkflowBuilder("Sabotage")


def first(value):
    print("first printed")
    return WorkflowValue(text=value.text)


def sabotage(value):
    [run_dir] = glob.glob(os.path.join(value.text, "sessions", "*", "workflows", "*"))
    os.rename(run_dir, run_dir + ".moved")
    with open(run_dir, "w") as handle:
        handle.write("not a folder")
    return "sabotaged"


def after(value):
${after}
    return "after"


a = wf.python("first", first)
b = wf.python("sabotage", sabotage)
c = wf.python("after", after)
wf.chain(a, b, c)
wf.start(a)
wf.output(a)
wf.output(c)
workflow = wf.build()
`;
}

describe.concurrent("icode workflow run: node failures", SLOW, () => {
  it("a raising node ends the run node_failed: exit 1, node_id, error, and the failure in events.jsonl", async () => {
    const p = project({ ".chrys/workflows/raises.py": RAISES });
    const r = await runJson(p, "raises", ["--trust"]);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ outcome: "node_failed", reason: "", node_id: "node" });
    expect(r.json.error).toContain("boom from node");
    expect(r.json.error).toContain("ValueError");
    // Outputs that completed before the failure stay.
    expect(r.json.outputs).toEqual([
      { node_id: "first", activation_id: "first@iter#1", text: "first done", data: null },
    ]);
    expect(r.stderr).toContain("boom from node");

    const rec = recordOf(p, r.json);
    expect(ofType(rec.events, "attempt_started")).toHaveLength(2); // first + node, no retry
    const failed = ofType(rec.events, "node_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      node_id: "node",
      activation_id: "node@iter#1",
      error: { class: "exception" },
    });
    expect(failed[0]!.error.message).toContain("boom from node");
    expect(failed[0]!.error.traceback ?? "").toContain("raises.py");
    expect(runEnd(rec.events)).toMatchObject({
      outcome: "node_failed",
      reason: "",
      node_id: "node",
      error_class: "exception",
    });
    expect(rec.outputs).toEqual(r.json.outputs);

    const text = await icode(p, ["workflow", "run", "raises"]);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toBe("first done\n");
    expect(text.stderr).toContain("boom from node");
    expect(text.stderr).not.toContain("✓ Workflow completed");
  });

  it("Retry(max_attempts=3) on a node that fails twice then succeeds: completed after three attempts", async () => {
    const p = project({ ".chrys/workflows/flaky.py": FLAKY });
    const r = await runJson(p, "flaky", ["--trust"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.outcome).toBe("completed");
    expect(r.json.outputs.map((o) => o.text)).toEqual(["first done", "succeeded on attempt 3"]);
    expect(readFileSync(join(p.dir, "attempts.txt"), "utf8")).toBe("3");
    const rec = recordOf(p, r.json);
    const attempts = ofType(rec.events, "attempt_started").filter((e) => e.node_id === "node");
    expect(attempts.map((e) => [e.attempt, e.max_attempts])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const failures = ofType(rec.events, "attempt_failed");
    expect(failures.map((e) => [e.attempt, e.will_retry, e.error.class])).toEqual([
      [1, true, "exception"],
      [2, true, "exception"],
    ]);
    expect(ofType(rec.events, "node_failed")).toHaveLength(0);
    expect(ofType(rec.events, "node_completed").find((e) => e.node_id === "node")).toMatchObject({
      attempt: 3,
    });
    expect(runEnd(rec.events).outcome).toBe("completed");
  });

  it("ctx.ask in the CLI fails the node with the class ask_unavailable, not retried", async () => {
    const p = project({ ".chrys/workflows/asks.py": ASKS });
    const r = await runJson(p, "asks", ["--trust"]);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ outcome: "node_failed", reason: "", node_id: "node" });
    expect(r.json.error).not.toBe("");
    const rec = recordOf(p, r.json);
    expect(ofType(rec.events, "attempt_started").filter((e) => e.node_id === "node")).toHaveLength(1);
    const [failed] = ofType(rec.events, "node_failed");
    expect(failed).toMatchObject({ node_id: "node", error: { class: "ask_unavailable" } });
    expect(runEnd(rec.events)).toMatchObject({
      outcome: "node_failed",
      node_id: "node",
      error_class: "ask_unavailable",
    });
  });

  it("a value that is not serializable fails the node and is never retried, even with Retry", async () => {
    const p = project({ ".chrys/workflows/setdata.py": SET_DATA });
    const r = await runJson(p, "setdata", ["--trust"]);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ outcome: "node_failed", reason: "", node_id: "node" });
    expect(r.json.error).toMatch(/set/);
    expect(readFileSync(join(p.dir, "calls.txt"), "utf8")).toBe("call\n");
    const rec = recordOf(p, r.json);
    expect(ofType(rec.events, "attempt_started").filter((e) => e.node_id === "node")).toHaveLength(1);
    expect(ofType(rec.events, "node_failed")[0]).toMatchObject({
      error: { class: "value_not_serializable" },
    });
    expect(runEnd(rec.events).error_class).toBe("value_not_serializable");
  });

  it("a node that kills its own worker ends the run worker_lost at once; earlier events stay readable", async () => {
    const p = project({ ".chrys/workflows/kills.py": KILLS });
    // No timed assertion: a run that did not notice the dead worker would hang until the 30 s guard kills it.
    const r = await icode(p, ["workflow", "run", "kills", "--trust", "--json"], {}, 30_000);
    expect(r.signal).toBeNull();
    const json = parseRunJson(r);
    expect(r.exitCode).toBe(1);
    expect(json).toMatchObject({ outcome: "worker_lost", reason: "", node_id: "node" });
    expect(json.outputs.map((o) => o.node_id)).toEqual(["first"]);
    const rec = recordOf(p, json);
    const types = rec.events.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual([
      "run_accepted",
      "workflow_run_start",
      "node_started",
      "attempt_started",
      "node_completed",
    ]);
    expect(runEnd(rec.events)).toMatchObject({ outcome: "worker_lost", node_id: "node" });
  });
});

describe("icode workflow run: deadlines", SLOW, () => {
  // The budget covers preview and loading too (clarification 14), so 4 s rather than 1 s keeps the test from
  // expiring before the run is accepted on a busy machine.
  it("--timeout on a sleeping node: exit 124, the result on stdout with cancelled / deadline_exceeded", async () => {
    const p = project({ ".chrys/workflows/sleeps.py": SLEEPS });
    const early = await icode(p, ["workflow", "run", "sleeps", "--trust", "--timeout", "0.001"]);
    expect(early.exitCode).toBe(124); // expired while previewing: nothing accepted, nothing on stdout
    expect(early.stdout).toBe("");
    expect(sessionIds(p.home)).toEqual([]);
    const trusted = await icode(p, ["workflow", "run", "sleeps", "--trust", "-q"]);
    expect(trusted.exitCode, trusted.stderr).toBe(0);

    const [r, text] = await Promise.all([
      runJson(p, "sleeps", ["--timeout", "4"]),
      icode(p, ["workflow", "run", "sleeps", "--timeout", "4"]),
    ]);
    expect(r.exitCode).toBe(124);
    expect(r.json).toMatchObject({ outcome: "cancelled", reason: "deadline_exceeded" });
    expect(r.json.outputs.map((o) => o.node_id)).toEqual(["first"]); // completed so far
    expect(r.json.duration).toBeLessThan(20); // the 30 s sleep was cut short
    expect(r.stderr).not.toBe("");
    const rec = recordOf(p, r.json);
    expect(ofType(rec.events, "node_cancelled").map((e) => e.node_id)).toEqual(["node"]);
    expect(runEnd(rec.events)).toMatchObject({ outcome: "cancelled", reason: "deadline_exceeded" });

    expect(text.exitCode).toBe(124);
    expect(text.stdout).toBe("first done\n");
    expect(text.stderr).not.toContain("✓ Workflow completed");
    expect(text.stderr).not.toBe("");
  });

  it("a deadline that passes while loading: exit 124 and only the error object on stdout", async () => {
    const p = project({
      ".chrys/workflows/slowload.py": `import time\ntime.sleep(2)\n${twoStep("Slow load", "def node(value):\n    return 'x'")}`,
    });
    const r = await icode(p, ["workflow", "run", "slowload", "--trust", "--json", "--timeout", "1"]);
    expect(r.exitCode).toBe(124);
    parseErrorJson(r, "deadline_exceeded");
    const text = await icode(p, ["workflow", "run", "slowload", "--trust", "--timeout", "1"]);
    expect(text.exitCode).toBe(124);
    expect(text.stdout).toBe("");
    expect(sessionIds(p.home)).toEqual([]);
  });
});

describe.concurrent("icode workflow run: arguments", SLOW, () => {
  it.each([
    ["0", ["--timeout", "0"]],
    ["-1", ["--timeout", "-1"]],
    ["=-1", ["--timeout=-1"]],
    ["nan", ["--timeout", "nan"]],
    ["NaN", ["--timeout", "NaN"]],
    ["inf", ["--timeout", "inf"]],
    ["Infinity", ["--timeout", "Infinity"]],
    ["abc", ["--timeout", "abc"]],
    ["empty", ["--timeout", ""]],
    ["hex", ["--timeout", "0x10"]],
    ["with a space", ["--timeout", " 5"]],
  ])(
    "--timeout %s is an argument error: exit 2 naming --timeout, the error object on stdout only with --json, nothing run",
    async (_, args) => {
      const p = project();
      const r = await icode(p, ["workflow", "run", "echo", "--input", "x", "--json", ...args]);
      expect(r.exitCode).toBe(2);
      expect(parseErrorJson(r, "usage_error").message).toContain(
        "--timeout must be a finite positive number",
      );
      expect(r.stderr).toContain("--timeout must be a finite positive number");
      const text = await icode(p, ["workflow", "run", "echo", "--input", "x", ...args]);
      expect(text.exitCode).toBe(2);
      expect(text.stdout).toBe("");
      expect(text.stderr).toMatch(
        /^icode: --timeout must be a finite positive number of seconds, got '.*'\n\nUsage: icode workflow run/,
      );
      expect(sessionIds(p.home)).toEqual([]);
    },
  );

  it("an unknown workflow ID: exit 1, a message naming it, nothing recorded", async () => {
    const p = project();
    for (const mode of [[], ["--json"]]) {
      const r = await icode(p, ["workflow", "run", "no-such-workflow", ...mode]);
      expect(r.exitCode).toBe(1);
      if (mode.length === 0) expect(r.stdout).toBe("");
      else expect(parseErrorJson(r, "workflow_not_found").message).toContain("no-such-workflow");
      expect(r.stderr).toContain("no-such-workflow");
    }
    expect(sessionIds(p.home)).toEqual([]);
  });
});

describe.concurrent("icode workflow run: the CLI process interrupted or killed", SLOW, () => {
  it("SIGINT during a node: exit 130 and the run recorded cancelled with reason interrupted", async () => {
    const p = project({ ".chrys/workflows/blocks.py": BLOCKS, "block.flag": "" });
    const running = startCli(p, ["workflow", "run", "blocks", "--trust", "--json"]);
    await waitForFile(join(p.dir, "started.marker"), running);
    running.child.kill("SIGINT");
    const r = await running.done;
    expect(r.signal).toBeNull();
    expect(r.exitCode).toBe(130);
    if (r.stdout !== "")
      expect(parseRunJson(r)).toMatchObject({ outcome: "cancelled", reason: "interrupted" });
    const [sid] = sessionIds(p.home);
    const [rid] = runIds(p.home, sid!);
    const rec = readRun(p.home, sid!, rid!);
    expect(ofType(rec.events, "node_cancelled")).toMatchObject([{ node_id: "node", reason: "interrupted" }]);
    expect(runEnd(rec.events)).toMatchObject({ outcome: "cancelled", reason: "interrupted" });
    expect(rec.outputs).toEqual([
      { node_id: "first", activation_id: "first@iter#1", text: "first done", data: null },
    ]);
  });

  it("SIGKILL of icode in the middle of a node, then a run with -s: the old run is recorded orphaned", async () => {
    const p = project({ ".chrys/workflows/blocks.py": BLOCKS, "block.flag": "" });
    const running = startCli(p, ["workflow", "run", "blocks", "--trust", "--json"]);
    await waitForFile(join(p.dir, "started.marker"), running);
    running.child.kill("SIGKILL");
    const killed = await running.done;
    expect(killed.signal).toBe("SIGKILL");

    const [sid] = sessionIds(p.home);
    const [oldRun] = runIds(p.home, sid!);
    const before = readEvents(join(runDir(p.home, sid!, oldRun!), "events.jsonl"), oldRun);
    expect(ofType(before, "workflow_run_end")).toHaveLength(0);
    expect(ofType(before, "attempt_started").map((e) => e.node_id)).toEqual(["first", "node"]);

    const r = await runJson(p, "blocks", ["-s", sid!]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.json.session_id).toBe(sid);
    expect(r.json.outputs.map((o) => o.text)).toEqual(["first done", "quick"]);

    const old = readRun(p.home, sid!, oldRun!);
    expect(old.outputs).toBeUndefined(); // never finalized
    expect(old.events.slice(0, before.length)).toEqual(before);
    expect(runEnd(old.events)).toMatchObject({
      outcome: "orphaned",
      reason: "",
      seq: before.length,
      outputs: [{ node_id: "first", activation_id: "first@iter#1", text: "first done", data: null }],
    });
    expect(runIds(p.home, sid!)).toEqual([oldRun, r.json.run_id].sort());
    expect(readSession(p.home, sid!)["runs"]).toEqual([oldRun, r.json.run_id]);
    expect(runEnd(recordOf(p, r.json).events).outcome).toBe("completed");
  });
});

describe.concurrent("icode workflow run: run records that cannot be written", SLOW, () => {
  for (const [name, after] of [
    ["and the run then only finishes", "    pass"],
    ["and a later node prints", '    print("after printed")'],
  ] as const) {
    it(`the run folder replaced by a file mid-run ${name}: storage_failed, exit 1, no crash`, async () => {
      const p = project({ ".chrys/workflows/sabotage.py": sabotage(after) });
      const r = await icode(p, ["workflow", "run", "sabotage", "--trust", "--json", "--input", p.home]);
      expect(r.signal).toBeNull();
      expect(r.stderr).not.toContain("internal error");
      const json = parseRunJson(r);
      expect(r.exitCode).toBe(1);
      expect(json.outcome).toBe("storage_failed");
      expect(json.error).not.toBe("");

      const [sid] = sessionIds(p.home);
      const dir = runDir(p.home, sid!, json.run_id);
      expect(statSync(dir).isFile()).toBe(true); // the sabotage is still in place
      const moved = `${dir}.moved`;
      // Everything written before is still readable in the renamed folder.
      const events = readEvents(join(moved, "events.jsonl"), json.run_id);
      expect(events.map((e) => e.type).slice(0, 2)).toEqual(["run_accepted", "workflow_run_start"]);
      expect(ofType(events, "node_completed").map((e) => e.node_id)).toContain("first");
      expect(existsSync(join(moved, "run.json"))).toBe(true);
      expect(existsSync(join(moved, "input.json"))).toBe(true);
      const diag = JSON.parse(
        readFileSync(join(moved, "nodes", readDirOne(join(moved, "nodes"))), "utf8"),
      ) as { phases: { stdout: { text: string } }[] };
      expect(diag.phases[0]?.stdout.text).toBe("first printed\n");
      // Put the folder back: the events that reached the log are whole lines.
      renameSync(dir, `${dir}.file`);
      renameSync(moved, dir);
      readEvents(join(dir, "events.jsonl"), json.run_id);
    });
  }
});

function readDirOne(dir: string): string {
  const names = readdirSync(dir);
  expect(names).toHaveLength(1);
  return names[0]!;
}
