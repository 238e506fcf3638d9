/**
 * `icode workflow run --interactive` (issue 17, item 19) under a real pseudo-terminal: util-linux `script`
 * runs the built CLI on a pty, and the test types keys into it once each question is on the screen.
 * Without the flag, a question fails its node with `ask_unavailable` as the reference says, terminal or not.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { CLI_BIN } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { icode, type Project, project, readRun, runEnd, runIds, SLOW, sessionIds } from "./run-helpers";

const HAS_SCRIPT = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const ASKS = `from chrys.workflows import NodeContext, Question, WorkflowBuilder, WorkflowValue


async def pick(value, ctx: NodeContext):
    areas = await ctx.ask(Question("Which areas?", header="Areas", options=["API", "Storage", "UI"], multi_select=True))
    deploy = await ctx.ask(Question("Deploy now?", options=["yes", "no"]))
    name = await ctx.ask("What is your name?")
    return WorkflowValue(text="%s|%s|%s" % (",".join(areas.selected), deploy.choice, name))


wf = WorkflowBuilder("Asks")
node = wf.python("pick", pick)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

const TIMES_OUT = `from chrys.workflows import NodeContext, WorkflowBuilder


async def wait(value, ctx: NodeContext):
    return await ctx.ask("Anyone there?")


wf = WorkflowBuilder("Times out")
node = wf.python("wait", wait, timeout=1.5)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

/** The CLI on a pseudo-terminal; `screen()` is everything it showed so far (escape sequences included). */
class Terminal {
  readonly child: ChildProcessWithoutNullStreams;
  private output = "";
  readonly done: Promise<number | null>;

  constructor(p: Project, args: string[]) {
    const command = [process.execPath, CLI_BIN, ...args]
      .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
      .join(" ");
    this.child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd: p.dir,
      env: { ...process.env, CHRYS_HOME: p.home, NO_COLOR: "1", COLUMNS: "100", LINES: "40" },
    });
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.output += chunk.toString("utf8");
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.output += chunk.toString("utf8");
    });
    this.done = new Promise((resolve) => this.child.on("close", (code) => resolve(code)));
  }

  screen(): string {
    return this.output;
  }

  /** Waits until `text` has been shown `times` times in all. */
  async waitFor(text: string, times = 1, timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.output.split(text).length - 1 < times) {
      if (Date.now() > until) throw new Error(`"${text}" did not appear; the screen:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  type(keys: string): void {
    this.child.stdin.write(keys);
  }
}

function lastRun(p: Project) {
  const [sid] = sessionIds(p.home);
  const [rid] = runIds(p.home, sid!);
  return readRun(p.home, sid!, rid!);
}

describe.runIf(HAS_SCRIPT).concurrent("icode workflow run --interactive on a terminal", SLOW, () => {
  it("answers a multi-select (numbers, arrows, space), a single-select (a number) and a free-text question", async () => {
    const p = project({ ".chrys/workflows/asks.py": ASKS });
    const t = new Terminal(p, ["workflow", "run", "asks", "--trust", "--interactive"]);
    await t.waitFor("? pick asks · Areas:");
    await t.waitFor("[ ] UI");
    expect(t.screen()).toContain("Which areas?");
    t.type("1"); // API
    t.type("\u001b[B\u001b[B"); // down to UI
    t.type(" "); // select it
    await t.waitFor("[x] UI");
    t.type("\r");
    await t.waitFor("→ API, UI");
    await t.waitFor("? pick asks:");
    await t.waitFor("2. no");
    t.type("2"); // a single-select: a number submits at once
    await t.waitFor("→ no");
    await t.waitFor("What is your name?");
    t.type("Ada\r");
    expect(await t.done, t.screen()).toBe(0);
    expect(t.screen()).toContain("API,UI|no|Ada");
    const record = lastRun(p);
    expect(runEnd(record.events)).toMatchObject({
      outcome: "completed",
      outputs: [{ text: "API,UI|no|Ada" }],
    });
    const answers = record.events.filter((e) => e.type === "answer");
    expect(answers.map((a) => (a as { status: string }).status)).toEqual([
      "answered",
      "answered",
      "answered",
    ]);
  });

  it("a question waits within its node's timeout: when the attempt times out it is withdrawn and the node fails", async () => {
    const p = project({ ".chrys/workflows/times-out.py": TIMES_OUT });
    const t = new Terminal(p, ["workflow", "run", "times-out", "--trust", "--interactive"]);
    await t.waitFor("Anyone there?");
    expect(await t.done, t.screen()).toBe(1);
    expect(t.screen()).toContain("(withdrawn: the node's attempt ended before an answer)");
    expect(t.screen()).toContain("✗ wait failed (timeout)");
    expect(runEnd(lastRun(p).events)).toMatchObject({ outcome: "node_failed", error_class: "timeout" });
  });

  it("Ctrl-C while a question is shown interrupts the run (exit 130)", async () => {
    const p = project({ ".chrys/workflows/asks.py": ASKS });
    const t = new Terminal(p, ["workflow", "run", "asks", "--trust", "--interactive"]);
    await t.waitFor("[ ] UI");
    t.type("\u0003");
    expect(await t.done, t.screen()).toBe(130);
    expect(runEnd(lastRun(p).events)).toMatchObject({ outcome: "cancelled", reason: "interrupted" });
  });

  it("without --interactive, a terminal changes nothing: the question fails with ask_unavailable", async () => {
    const p = project({ ".chrys/workflows/asks.py": ASKS });
    const t = new Terminal(p, ["workflow", "run", "asks", "--trust"]);
    expect(await t.done, t.screen()).toBe(1);
    expect(t.screen()).toContain("✗ pick failed (ask_unavailable)");
  });
});

describe("icode workflow run --interactive without a terminal", SLOW, () => {
  it("is a usage error (exit 2): there is nobody to answer", async () => {
    const p = project();
    const r = await icode(p, ["workflow", "run", "echo", "--interactive"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("icode: --interactive needs a terminal on standard input and standard error");
    expect(sessionIds(p.home)).toEqual([]);
  });
});
