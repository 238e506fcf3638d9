import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { createVirtualClock, type Executors, startRun } from "@icode/workflow-scheduler";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFINITION, runInit, sessionInit } from "./conformance/fixtures";
import { finish, removeDir, tempDir } from "./helpers";
import {
  createRun,
  createSession,
  exportTrajectory,
  readRunDir,
  sessionDir,
  TrajectorySchema,
} from "./internals";

/** The recorder as the real scheduler's sink (executors are fakes, as the pure scheduler allows). */

let root: string;
let home: string;
beforeEach(() => {
  root = tempDir();
  home = join(root, "home");
});
afterEach(() => removeDir(root));

const executors: Executors = {
  runPython: async ({ input, node, attempt }, io) => {
    io.emit(`${node.id} attempt ${attempt}`);
    if (node.id === "a" && attempt === 1) {
      return {
        status: "failed",
        error: { class: "exception", message: "flaky", retryable: true, traceback: null },
      };
    }
    return { status: "completed", value: { text: `${input.text}+${node.id}`, data: null } };
  },
};

const hasPrlimit = process.platform === "linux" && spawnSync("prlimit", ["--version"]).status === 0;

describe("FsRunRecorder as the scheduler's RecordSink", () => {
  it("records a real scheduler run that reads back whole and exports", async () => {
    const session = createSession(home, sessionInit(root));
    const recorder = createRun(home, session.session_id, runInit());
    const run = startRun({
      runId: recorder.runId,
      definition: DEFINITION,
      input: { text: "in", data: null },
      executors,
      clock: createVirtualClock(1_700_000_000_000),
      sink: recorder,
    });
    const result = await run.result;
    expect(result.outcome).toBe("completed");
    finish(recorder, {
      outputs: result.outputs,
      output: { load: { text: "", truncated: false }, native: { text: "", dropped_bytes: 0 } },
    });
    const record = readRunDir(recorder.dir);
    expect(record.warnings).toEqual([]);
    expect(record.events.map((e) => e.seq)).toEqual(record.events.map((_, i) => i));
    expect(record.end).toMatchObject({ outcome: "completed" });
    expect(record.outputs).toEqual([{ node_id: "b", activation_id: "b@iter#1", text: "in+a+b", data: null }]);
    const trajectory = TrajectorySchema.parse(exportTrajectory(sessionDir(home, session.session_id), "json"));
    expect(trajectory.runs[0]?.nodes[0]?.attempts.map((a) => a.status)).toEqual(["failed", "completed"]);
  });

  it.skipIf(!hasPrlimit)(
    "turns a write the kernel refuses into outcome storage_failed without crashing",
    async () => {
      const session = createSession(home, sessionInit(root));
      const recorder = createRun(home, session.session_id, runInit());
      const limit = (value: string) =>
        execFileSync("prlimit", ["--pid", String(process.pid), `--fsize=${value}`], { stdio: "ignore" });
      let outcome: string;
      limit("700:unlimited"); // room for the first event or two of events.jsonl, then EFBIG
      try {
        const run = startRun({
          runId: recorder.runId,
          definition: DEFINITION,
          input: { text: "in", data: null },
          executors,
          clock: createVirtualClock(0),
          sink: recorder,
        });
        outcome = (await run.result).outcome;
      } finally {
        limit("unlimited:unlimited");
      }
      expect(outcome).toBe("storage_failed");
      await recorder.close();
      // The batch that hit the limit was cut back whole; once the disk takes writes again the scheduler's
      // last try records the true end.
      const record = readRunDir(recorder.dir);
      expect(record.warnings).toEqual([]);
      expect(record.end).toMatchObject({ outcome: "storage_failed" });
      expect(record.end?.error).toMatch(/EFBIG/);
    },
  );
});
