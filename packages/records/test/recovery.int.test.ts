import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInit, scriptedEvents, sessionInit } from "./conformance/fixtures";
import { append, removeDir, tempDir } from "./helpers";
import {
  createRun,
  createSession,
  FILES,
  isProcessAlive,
  listRuns,
  loadSession,
  processStartMarker,
  readRunDir,
  recoverOrphans,
  saveSession,
  sessionDir,
} from "./internals";

let root: string;
let home: string;
beforeEach(() => {
  root = tempDir();
  home = join(root, "home");
});
afterEach(() => removeDir(root));

/** A real process standing in for an engine process that runs a workflow. */
function startWorker() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("exit", (_code, signal) => resolve(signal)),
  );
  return { child, exited };
}

describe("orphan recovery with real processes", () => {
  it("leaves a live worker's run alone, and marks it orphaned after the worker is killed with SIGKILL", async () => {
    const worker = startWorker();
    try {
      const pid = worker.child.pid!;
      const session = createSession(home, sessionInit(root));
      const recorder = createRun(home, session.session_id, runInit({ pid }));
      for (const event of scriptedEvents(recorder.runId, { end: false })) append(recorder, event);
      recorder.close();
      const header = readRunDir(recorder.dir).header;
      expect(header.pid).toBe(pid);
      if (process.platform === "linux") expect(header.process_start).toMatch(/^[0-9a-f-]*:\d+$/);

      const dir = sessionDir(home, session.session_id);
      expect(recoverOrphans(dir)).toEqual([]);

      worker.child.kill("SIGKILL");
      expect(await worker.exited).toBe("SIGKILL");
      expect(isProcessAlive(pid)).toBe(false);

      const recovered = recoverOrphans(dir);
      expect(recovered.map((r) => [r.run_id, r.pid])).toEqual([[recorder.runId, pid]]);
      const record = readRunDir(recorder.dir);
      expect(record.end).toMatchObject({
        outcome: "orphaned",
        reason: "",
        error_class: "process_lost",
        seq: 9,
      });
      expect(recoverOrphans(dir)).toEqual([]);
    } finally {
      worker.child.kill("SIGKILL");
    }
  });

  it.skipIf(process.platform !== "linux")(
    "tells a reused pid apart by its start time: a live process that is not the run's is no owner",
    async () => {
      const first = startWorker();
      // Start times are counted in clock ticks (usually 10 ms): start the second one a few ticks later.
      await new Promise((resolve) => setTimeout(resolve, 40));
      const second = startWorker();
      try {
        const session = createSession(home, sessionInit(root));
        // The header names the first worker; recovery asks about "the same pid" but finds the second
        // worker's start marker there, as after pid reuse.
        const recorder = createRun(home, session.session_id, runInit({ pid: first.child.pid! }));
        recorder.close();
        const secondMarker = processStartMarker(second.child.pid!);
        expect(secondMarker).not.toBeNull();
        expect(secondMarker).not.toBe(readRunDir(recorder.dir).header.process_start);
        const recovered = recoverOrphans(sessionDir(home, session.session_id), {
          isAlive: () => true,
          startMarker: () => processStartMarker(second.child.pid!),
        });
        expect(recovered.map((r) => r.run_id)).toEqual([recorder.runId]);
      } finally {
        first.child.kill("SIGKILL");
        second.child.kill("SIGKILL");
      }
    },
  );

  it("cleans up what a dead process left half-made, and finds a run the session file does not list", async () => {
    const worker = startWorker();
    const deadPid = worker.child.pid!;
    worker.child.kill("SIGKILL");
    await worker.exited;
    const session = createSession(home, sessionInit(root));
    const dir = sessionDir(home, session.session_id);
    // A run folder still being built when its process died, and atomic-write temporaries of that process.
    const runs = join(dir, FILES.runs);
    mkdirSync(join(runs, `.${"a".repeat(32)}.${deadPid}.partial`), { recursive: true });
    writeFileSync(join(runs, `.${"a".repeat(32)}.${deadPid}.partial`, FILES.header), "{");
    writeFileSync(join(dir, `.session.json.${deadPid}.0123456789ab.tmp`), "{");
    // A temporary of a live process (this one) stays.
    const mine = join(dir, `.session.json.${process.pid}.0123456789ab.tmp`);
    writeFileSync(mine, "{");
    // A run whose process died after its folder was made but before session.json listed it.
    const recorder = createRun(home, session.session_id, runInit({ pid: deadPid }));
    await recorder.close();
    const listed = loadSession(home, session.session_id);
    saveSession(home, { ...listed, runs: [] });
    writeFileSync(join(recorder.dir, `.outputs.json.${deadPid}.0123456789ab.tmp`), "[");
    // An empty run folder (older versions made it before writing the header) goes; a run folder with
    // something in it but no readable header stays, as an unreadable run.
    mkdirSync(join(runs, "e".repeat(32)));
    mkdirSync(join(runs, "d".repeat(32)));
    writeFileSync(join(runs, "d".repeat(32), "events.jsonl"), "");

    const recovered = recoverOrphans(dir);
    expect(recovered.map((r) => r.run_id)).toEqual([recorder.runId]);
    expect(readdirSync(runs).sort()).toEqual(["d".repeat(32), recorder.runId].sort());
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([basename(mine)]);
    expect(readdirSync(recorder.dir).some((name) => name.endsWith(".tmp"))).toBe(false);
    expect(listRuns(home, session.session_id)).toEqual(expect.arrayContaining([recorder.runId]));
  });
});
