import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isWorkflowError } from "@icode/workflow-errors";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInit, scriptedEvents, sessionInit } from "./conformance/fixtures";
import { append, finish, removeDir, tempDir } from "./helpers";
import { createRun, createSession, FILES, loadSession, readEventLog, sessionDir } from "./internals";

/**
 * Write failures, made real in ways that also stop root (tests run as root here, where chmod 0o500 does
 * not stop writes):
 * - a path whose parent is a regular FILE (ENOTDIR for everyone);
 * - the run folder moved away and replaced by a file mid-run;
 * - RLIMIT_FSIZE lowered on this very process with `prlimit` (Linux), so the kernel refuses to grow
 *   `events.jsonl` part-way through a line (EFBIG; Node ignores SIGXFSZ).
 */

let root: string;
let home: string;
beforeEach(() => {
  root = tempDir();
  home = join(root, "home");
});
afterEach(() => removeDir(root));

function thrown(action: () => unknown): { code: string; message: string } {
  try {
    action();
  } catch (error) {
    if (isWorkflowError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a storage failure");
}

const hasPrlimit = process.platform === "linux" && spawnSync("prlimit", ["--version"]).status === 0;

describe("storage failures", () => {
  it("fails run creation with storage_failed when the runs folder is a file, and adds no run", () => {
    const session = createSession(home, sessionInit(root));
    writeFileSync(join(sessionDir(home, session.session_id), FILES.runs), "not a folder");
    const failure = thrown(() => createRun(home, session.session_id, runInit()));
    expect(failure.code).toBe("storage_failed");
    expect(failure.message).toMatch(/ENOTDIR|EEXIST/);
    expect(loadSession(home, session.session_id).runs).toEqual([]);
  });

  it("fails diagnostics and finish with storage_failed when the run folder is replaced by a file", () => {
    const session = createSession(home, sessionInit(root));
    const recorder = createRun(home, session.session_id, runInit());
    const events = scriptedEvents(recorder.runId);
    for (const event of events.slice(0, 5)) append(recorder, event);
    const moved = `${recorder.dir}.moved`;
    renameSync(recorder.dir, moved);
    writeFileSync(recorder.dir, "in the way");
    const diagnostics = thrown(() =>
      recorder.writeNodeDiagnostics({
        node_id: "a",
        activation_id: "a@iter#1",
        attempt: 1,
        phases: [{ phase: "node", stdout: { text: "out", truncated: false } }],
      }),
    );
    expect(diagnostics.code).toBe("storage_failed");
    expect(diagnostics.message).toContain(join(recorder.dir, FILES.nodes));
    expect(thrown(() => finish(recorder, { outputs: [], output: {} })).code).toBe("storage_failed");
    // Everything written before is still readable where the folder went.
    const log = readEventLog(join(moved, FILES.events));
    expect(log.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(log.warnings).toEqual([]);
  });

  it.skipIf(!hasPrlimit)(
    "throws storage_failed when the kernel refuses to grow events.jsonl mid-line, keeps earlier events whole, and still records the end",
    () => {
      const session = createSession(home, sessionInit(root));
      const recorder = createRun(home, session.session_id, runInit());
      const events = scriptedEvents(recorder.runId);
      for (const event of events.slice(0, 3)) append(recorder, event);
      const log = join(recorder.dir, FILES.events);
      const size = statSync(log).size;
      const limit = (value: string) =>
        execFileSync("prlimit", ["--pid", String(process.pid), `--fsize=${value}`], { stdio: "ignore" });
      limit(`${size + 40}:unlimited`);
      let failure: { code: string; message: string };
      try {
        failure = thrown(() => append(recorder, events[3]!));
        // Still failing, still not crashing.
        expect(thrown(() => append(recorder, events[3]!)).code).toBe("storage_failed");
      } finally {
        limit("unlimited:unlimited");
      }
      expect(failure.code).toBe("storage_failed");
      expect(failure.message).toMatch(/EFBIG/);
      // The partial line was cut off: the file ends with the third whole line.
      expect(statSync(log).size).toBe(size);
      expect(readFileSync(log, "utf8").endsWith("\n")).toBe(true);
      // A failed write is sticky (the scheduler ends the run with storage_failed), but once the disk takes
      // writes again the run's end still gets recorded, on a whole line after the earlier ones.
      expect(thrown(() => append(recorder, events[4]!)).code).toBe("storage_failed");
      const end = events[events.length - 1]!;
      recorder.writeLast(end);
      finish(recorder, { outputs: [], output: {} });
      const read = readEventLog(log);
      expect(read.warnings).toEqual([]);
      expect(read.events.map((e) => e.seq)).toEqual([0, 1, 2, end.seq]);
    },
  );
});
