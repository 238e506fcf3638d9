import { existsSync } from "node:fs";
import { join } from "node:path";
import { tmpDir, writeTree } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/index";

// Two async branches that announce themselves, then sleep; a branch the engine cancels writes a marker.
// `src` runs first and alone, so that its call's abort signal, reused, serves one of the branches.
const BRANCHES = `import asyncio
from pathlib import Path

from chrys.workflows import NodeContext, WorkflowBuilder, WorkflowValue

HERE = Path(__file__).parent


def echo(value: WorkflowValue) -> WorkflowValue:
    return value


def branch(name: str):
    async def run(value: WorkflowValue, ctx: NodeContext) -> WorkflowValue:
        ctx.emit("running")
        try:
            await asyncio.sleep(1.5)
        except asyncio.CancelledError:
            (HERE / (name + ".cancelled")).write_text("yes")
            raise
        return WorkflowValue(text=name)

    return run


wf = WorkflowBuilder("Branches")
src = wf.python("src", echo)
one = wf.python("one", branch("one"))
two = wf.python("two", branch("two"))
sink = wf.python("sink", echo)
wf.edge(src, one)
wf.edge(src, two)
wf.join([one, two], sink)
wf.start(src)
wf.output(sink)
workflow = wf.build()
`;

function project() {
  const cwd = tmpDir();
  writeTree(cwd, { ".chrys/workflows/branches.py": BRANCHES });
  const env = { ...process.env, CHRYS_HOME: join(cwd, ".home") };
  const marker = (name: string) => existsSync(join(cwd, ".chrys", "workflows", `${name}.cancelled`));
  return { engine: createEngine({ cwd, env }), marker };
}

describe("aborting Python calls", () => {
  it("cancels the call of a running node that is skipped, and no other call", async () => {
    const { engine, marker } = project();
    const run = engine.run({ workflowId: "branches", trust: true });
    let running = 0;
    let skipped: unknown = null;
    run.events.on("emit", () => {
      if (++running === 2) skipped = run.skipNode("one@iter#1", { note: "not needed" });
    });
    const report = await run.result;
    await engine.close();
    expect(skipped).toEqual({ ok: true });
    expect(report).toMatchObject({ status: "finished", outcome: "completed", outputs: [{ text: "two" }] });
    expect(marker("one")).toBe(true);
    expect(marker("two")).toBe(false);
  });
});
