/**
 * A workflow that starts a process in the background and leaves it running: `icode` ends when its own work
 * is done, with stdout and stderr as pipes (as here, and as in a terminal), while that process, which
 * inherited the worker's stdout and stderr, still runs. The process is the workflow's business: iCode
 * neither waits for it nor stops it (docs/protocol.md, "Process").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { processRunning } from "@icode/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { icode, parseRunJson, project, SLOW } from "./run-helpers";

/** Starts `sleep 30` (which inherits fd 1 and 2) at the top level and in its node, and notes their pids. */
const BACKGROUND = `import subprocess
from chrys.workflows import WorkflowBuilder, WorkflowValue


def start(name):
    child = subprocess.Popen(["sleep", "30"])
    with open(name, "w") as f:
        f.write(str(child.pid))


start("top-level.pid")


def node(value: WorkflowValue) -> WorkflowValue:
    start("node.pid")
    return WorkflowValue("started")


wf = WorkflowBuilder("Background")
n = wf.python("node", node)
wf.start(n)
wf.output(n)
workflow = wf.build()
`;

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

/** The pid a workflow wrote to `file` in the project folder; it is killed after the test. */
function backgroundPid(dir: string, file: string): number {
  const pid = Number(readFileSync(join(dir, file), "utf8"));
  started.push(pid);
  return pid;
}

describe("a process the workflow leaves running in the background", SLOW, () => {
  it("does not keep `icode workflow validate` waiting", async () => {
    const p = project({ ".chrys/workflows/background.py": BACKGROUND });
    const r = await icode(p, ["workflow", "validate", ".chrys/workflows/background.py"]);
    const pid = backgroundPid(p.dir, "top-level.pid");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^PASS background \(file\)/m);
    // `sleep 30` still runs: icode did not wait for it (it would have taken 30 s), nor stop it.
    expect(processRunning(pid)).toBe(true);
  });

  it("does not keep `icode workflow run` waiting, from the top level or from a node", async () => {
    const p = project({ ".chrys/workflows/background.py": BACKGROUND });
    const r = await icode(p, ["workflow", "run", "background", "--trust", "--json"]);
    const topLevel = backgroundPid(p.dir, "top-level.pid");
    const fromNode = backgroundPid(p.dir, "node.pid");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(parseRunJson(r)).toMatchObject({ outcome: "completed", outputs: [{ text: "started" }] });
    expect(processRunning(topLevel)).toBe(true);
    expect(processRunning(fromNode)).toBe(true);
  });
});
