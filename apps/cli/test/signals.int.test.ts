/**
 * Signals to `icode workflow run` (issue 17, items 6 and 15): SIGTERM and SIGHUP are handled like Ctrl-C
 * (the run is recorded `cancelled`, the worker is stopped, exit 143 / 129), and the exit code follows the
 * recorded outcome, so a Ctrl-C once the run has ended does not turn a completed run into 130.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { processRunning, waitUntil, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import {
  ofType,
  parseRunJson,
  project,
  readRun,
  runEnd,
  runIds,
  SLOW,
  sessionIds,
  startCli,
  WAIT_HELPER,
  waitForFile,
} from "./run-helpers";

/** A node that notes its worker's pid, then blocks until the CLI is gone (at most 20 s). */
const BLOCKS = `import os
from chrys.workflows import WorkflowBuilder
${WAIT_HELPER}

def block(value):
    with open("worker.pid", "w") as handle:
        handle.write(str(os.getpid()))
    wait_for_parent("started.marker", 20)
    return "unblocked"


wf = WorkflowBuilder("Blocks")
node = wf.python("block", block)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

/** The run of the session started last. */
function newest(home: string, sessionId: string): string {
  const runs = runIds(home, sessionId).map((id) => readRun(home, sessionId, id));
  runs.sort((a, b) => String(a.header["started_at"]).localeCompare(String(b.header["started_at"])));
  return String(runs.at(-1)!.header["run_id"]);
}

describe.concurrent("icode workflow run: SIGTERM and SIGHUP", SLOW, () => {
  for (const [signal, exitCode] of [
    ["SIGTERM", 143],
    ["SIGHUP", 129],
    ["SIGINT", 130],
  ] as const) {
    it(`${signal} during a node: exit ${exitCode}, the run recorded cancelled, the worker stopped`, async () => {
      const p = project({ ".chrys/workflows/blocks.py": BLOCKS });
      for (const mode of [["--json"], []]) {
        const running = startCli(p, ["workflow", "run", "blocks", "--trust", ...mode]);
        await waitForFile(join(p.dir, "started.marker"), running);
        const worker = Number(readFileSync(join(p.dir, "worker.pid"), "utf8"));
        running.child.kill(signal);
        const r = await running.done;
        expect(r.signal).toBeNull();
        expect(r.exitCode, r.stderr).toBe(exitCode);
        if (mode.length > 0) {
          expect(parseRunJson(r)).toMatchObject({ outcome: "cancelled", reason: "interrupted", outputs: [] });
        } else {
          expect(r.stderr).toContain("✗ Workflow cancelled: ");
        }
        expect(await waitUntil(() => !processRunning(worker), 10_000)).toBe(true);
        const [sid] = sessionIds(p.home);
        const rid = mode.length > 0 ? parseRunJson(r).run_id : newest(p.home, sid!);
        const record = readRun(p.home, sid!, rid);
        expect(ofType(record.events, "node_cancelled")).toMatchObject([
          { node_id: "block", reason: "interrupted" },
        ]);
        expect(runEnd(record.events)).toMatchObject({ outcome: "cancelled", reason: "interrupted" });
        rmSync(join(p.dir, "started.marker")); // for the next mode

        rmSync(join(p.dir, "worker.pid"));
      }
    });
  }
});

describe("icode workflow run: the exit code follows the recorded outcome", SLOW, () => {
  it("Ctrl-C after the run-end event (a blocking workflow_run_end hook still running): exit 0, completed", async () => {
    const p = project();
    const marker = join(p.dir, "end-hook.marker");
    writeTree(p.home, {
      "hooks.json": JSON.stringify({
        hooks: [
          {
            event: "workflow_run_end",
            command: `touch '${marker}'; sleep 2`,
            blocking: true,
          },
        ],
      }),
    });
    const running = startCli(p, ["workflow", "run", "echo", "--input", "done", "--json"]);
    await waitForFile(marker, running);
    running.child.kill("SIGINT");
    const r = await running.done;
    expect(r.exitCode, r.stderr).toBe(0);
    const json = parseRunJson(r);
    expect(json).toMatchObject({ outcome: "completed", outputs: [{ text: "done" }] });
    expect(runEnd(readRun(p.home, json.session_id!, json.run_id).events).outcome).toBe("completed");
  });
});
