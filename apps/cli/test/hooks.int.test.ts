/**
 * Lifecycle hooks of `icode workflow run` (docs/hooks.md, spec "Lifecycle hooks"): `<CHRYS_HOME>/hooks.json`
 * with commands that append their stdin to a file, so the test sees each event's JSON in firing order.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { icode, type Project, project, runJson, SLOW, waitForFile } from "./run-helpers";

const EVENTS = ["session_start", "session_restored", "session_end", "workflow_run_start", "workflow_run_end"];

/** Every event appends its JSON to `hooks.log` (blocking, so the order is the firing order). */
function withHooks(p: Project, extra: object[] = []): string {
  const log = join(p.dir, "hooks.log");
  writeTree(p.home, {
    "hooks.json": JSON.stringify({
      hooks: [...EVENTS.map((event) => ({ event, command: `cat >> '${log}'`, blocking: true })), ...extra],
    }),
  });
  return log;
}

type HookInput = Record<string, unknown> & { event: string };

function readLog(log: string): HookInput[] {
  if (!existsSync(log)) return [];
  const text = readFileSync(log, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as HookInput);
}

const PROJECT_WF = `import time

from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("Hooked")


def work(value):
    if value.text == "fail":
        raise RuntimeError("asked to fail")
    if value.text == "sleep":
        time.sleep(30)
    return "done"


node = wf.python("work", work)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

describe("icode workflow run: lifecycle hooks", SLOW, () => {
  it("fires session_start, workflow_run_start, workflow_run_end, session_end; a second -s run fires session_restored", async () => {
    const p = project();
    const background = join(p.dir, "background.log");
    const log = withHooks(p, [{ event: "workflow_run_end", command: `cat >> '${background}'` }]);
    const first = await runJson(p, "echo", ["--input", "hello\nworld"]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stderr).toBe(""); // hooks that succeed print nothing
    const sid = first.json.session_id!;
    const base = { session_kind: "workflow", workflow_id: "echo", session_id: sid, cwd: p.dir, profile: "" };

    let events = readLog(log);
    expect(events.map((e) => e.event)).toEqual([
      "session_start",
      "workflow_run_start",
      "workflow_run_end",
      "session_end",
    ]);
    for (const e of events) expect(e).toMatchObject(base);
    expect(events[0]).toEqual({ event: "session_start", ...base });
    expect(events[1]).toEqual({
      event: "workflow_run_start",
      ...base,
      run_id: first.json.run_id,
      input_text: "hello\nworld",
    });
    expect(events[2]).toEqual({
      event: "workflow_run_end",
      ...base,
      run_id: first.json.run_id,
      outcome: "completed",
      reason: "",
    });
    expect(events[3]).toEqual({ event: "session_end", ...base });
    // A non-blocking hook runs too (alongside, so the test waits for it).
    await waitForFile(background);

    const second = await runJson(p, "echo", ["-s", sid, "--input", "again"]);
    expect(second.exitCode, second.stderr).toBe(0);
    events = readLog(log).slice(4);
    expect(events.map((e) => e.event)).toEqual([
      "session_restored",
      "workflow_run_start",
      "workflow_run_end",
      "session_end",
    ]);
    expect(events[0]).toEqual({ event: "session_restored", ...base, restored_session_id: sid });
    expect(events[1]).toMatchObject({ run_id: second.json.run_id, input_text: "again" });
    expect(events[2]).toMatchObject({ run_id: second.json.run_id, outcome: "completed", reason: "" });
  });

  it("does not exit before a non-blocking hook has finished", async () => {
    const p = project();
    const late = join(p.dir, "late.log");
    withHooks(p, [
      { event: "session_end", command: `sleep 0.5; cat > '${late}.part' && mv '${late}.part' '${late}'` },
    ]);
    const r = await runJson(p, "echo", ["--input", "hi"]);
    expect(r.exitCode, r.stderr).toBe(0);
    // No waiting here: the process was still there for the hook, which read its event and wrote it.
    expect(JSON.parse(readFileSync(late, "utf8"))).toMatchObject({
      event: "session_end",
      workflow_id: "echo",
    });
  });

  it("reports the outcome and reason of failed and timed-out runs, with the project folder as cwd", async () => {
    const p = project({ ".chrys/workflows/hooked.py": PROJECT_WF });
    const log = withHooks(p);
    const failed = await runJson(p, "hooked", ["--trust", "--input", "fail"]);
    expect(failed.exitCode).toBe(1);
    const timedOut = await runJson(p, "hooked", ["--input", "sleep", "--timeout", "4"]);
    expect(timedOut.exitCode).toBe(124);

    const ends = readLog(log).filter((e) => e.event === "workflow_run_end");
    expect(ends).toEqual([
      expect.objectContaining({
        workflow_id: "hooked",
        session_id: failed.json.session_id,
        cwd: p.dir,
        run_id: failed.json.run_id,
        outcome: "node_failed",
        reason: "",
      }),
      expect.objectContaining({
        session_id: timedOut.json.session_id,
        run_id: timedOut.json.run_id,
        outcome: "cancelled",
        reason: "deadline_exceeded",
      }),
    ]);
    expect(readLog(log).map((e) => e.event)).toEqual([
      "session_start",
      "workflow_run_start",
      "workflow_run_end",
      "session_end",
      "session_start",
      "workflow_run_start",
      "workflow_run_end",
      "session_end",
    ]);
  });

  it("start requests that fail their checks fire no hook", async () => {
    const p = project({ ".chrys/workflows/hooked.py": PROJECT_WF });
    const log = withHooks(p);
    const unknown = await icode(p, ["workflow", "run", "no-such-id"]);
    expect(unknown.exitCode).toBe(1);
    const untrusted = await icode(p, ["workflow", "run", "hooked"]);
    expect(untrusted.exitCode).toBe(1);
    const badSession = await icode(p, [
      "workflow",
      "run",
      "echo",
      "-s",
      "0b7c2a4e-1f3d-4c5b-9a8e-7d6c5b4a3f21",
    ]);
    expect(badSession.exitCode).toBe(1);
    expect(readLog(log)).toEqual([]);
  });

  it("an invalid hooks.json is a warning on stderr, and the run goes on", async () => {
    const p = project();
    writeTree(p.home, {
      "hooks.json": JSON.stringify({
        hooks: [{ event: "workflow_run_end", command: "true", colour: "red" }],
      }),
    });
    const r = await icode(p, ["workflow", "run", "echo", "--input", "x"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("x\n");
    expect(r.stderr).toContain("hooks.json");
  });

  it("a malformed hooks.json is reported once per run, with its code", async () => {
    const p = project();
    writeTree(p.home, { "hooks.json": "{ not json" });
    for (const mode of [[], ["--json"]]) {
      const r = await icode(p, ["workflow", "run", "echo", "--input", "x", ...mode]);
      expect(r.exitCode, r.stderr).toBe(0);
      const warnings = r.stderr.split("\n").filter((line) => line.startsWith("warning: "));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^warning: hook: .*hooks\.json.* \[hooks_config_invalid\]$/);
    }
  });

  it("failing and timed-out non-blocking hooks are reported once each, with their codes, after the run", async () => {
    const p = project();
    writeTree(p.home, {
      "hooks.json": JSON.stringify({
        hooks: [
          { event: "workflow_run_start", command: "echo start broke >&2; exit 3" },
          { event: "workflow_run_end", command: "sleep 5", timeout_seconds: 0.5 },
          { event: "session_end", command: ["/no/such/program"] },
        ],
      }),
    });
    const r = await icode(p, ["workflow", "run", "echo", "--input", "x"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stderr.split("\n");
    const warnings = lines.filter((line) => line.startsWith("warning: hook: "));
    expect(warnings.map((w) => /\[([a-z_]+)\]$/.exec(w)?.[1]).sort()).toEqual([
      "hook_failed",
      "hook_spawn_failed",
      "hook_timeout",
    ]);
    expect(warnings.find((w) => w.endsWith("[hook_failed]"))).toContain("start broke");
    // Non-blocking: reported once the run has ended, after its last node.
    const done = lines.indexOf("✓ echo");
    expect(done).toBeGreaterThan(-1);
    for (const w of warnings) expect(lines.indexOf(w)).toBeGreaterThan(done);
  });
});
