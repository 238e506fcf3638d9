import { readFileSync } from "node:fs";
import { tmpDir } from "@icode/test-utils";
import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { AgentProcess } from "./agent-process";
import { StderrTail } from "./stderr-tail";

function launch(script: string) {
  return {
    command: process.execPath,
    args: ["-e", script],
    cwd: tmpDir("acp-proc-"),
    env: { PATH: process.env["PATH"] ?? "" },
  };
}

/** True while the process exists and is not a zombie waiting for whoever adopted it to reap it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/u.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

describe("AgentProcess", () => {
  it("ends a process that exits when its stdin closes, without signals", async () => {
    const proc = await AgentProcess.start(
      launch("process.stdin.resume(); process.stdin.on('end', () => process.exit(0))"),
      {
        stderr: new StderrTail(),
      },
    );
    expect(await proc.stop(5000)).toEqual({ code: 0, signal: null });
  });

  it("kills a process that ignores stdin and SIGTERM, after the grace periods", async () => {
    const proc = await AgentProcess.start(
      launch(
        "process.on('SIGTERM', () => {}); process.stderr.write('stubborn'); setInterval(() => {}, 1000)",
      ),
      { stderr: new StderrTail() },
    );
    expect(await proc.stop(200)).toEqual({ code: null, signal: "SIGKILL" });
    expect(alive(proc.pid)).toBe(false);
  });

  it.skipIf(process.platform === "win32")("ends what the agent started, with its process group", async () => {
    const stderr = new StderrTail();
    const proc = await AgentProcess.start(
      launch(
        "const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });" +
          "process.stderr.write(String(c.pid)); process.stdin.resume(); process.stdin.on('end', () => process.exit(0))",
      ),
      { stderr },
    );
    let grandchild = 0;
    while (grandchild === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      grandchild = Number(stderr.captured().text);
    }
    expect(alive(grandchild)).toBe(true);
    await proc.stop(2000);
    // SIGTERM reaches it at once; its new parent reaps it when it gets to it.
    for (let i = 0; i < 500 && alive(grandchild); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(grandchild)).toBe(false);
  });

  it("keeps what the process wrote to stderr", async () => {
    const stderr = new StderrTail();
    const proc = await AgentProcess.start(launch("console.error('hello from stderr')"), { stderr });
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    expect(stderr.captured()).toEqual({ text: "hello from stderr\n", truncated: false });
  });

  it("fails the start when the program does not exist", async () => {
    const error = await AgentProcess.start(
      { command: "no-such-program-anywhere", args: [], cwd: tmpDir(), env: { PATH: "/nonexistent" } },
      { stderr: new StderrTail() },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isWorkflowError(error) && error.code).toBe("acp_start_failed");
    expect((error as Error).message).toContain("no such program on PATH");
  });
});
