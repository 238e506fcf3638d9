import type { AttemptIO, PythonAttemptRequest } from "@icode/workflow-scheduler";
import { describe, expect, it } from "vitest";
import type { InvokeOutcome, InvokeRequest } from "./call";
import { pythonExecutors, SEND_BATCH } from "./python-executor";
import type { PythonWorker } from "./worker";

/** A worker that records what is sent to it, and answers every node call with its input. */
function recordingWorker(log: string[]) {
  const worker = {
    invoke(request: InvokeRequest): Promise<InvokeOutcome> {
      if (request.kind !== "node") throw new Error(`unexpected ${request.kind}`);
      log.push(`invoke ${request.node}`);
      return Promise.resolve({
        ok: true,
        kind: "node",
        value: request.input,
        passed: [],
        output: { text: "", truncated: false },
        leaked_threads: 0,
      });
    },
  };
  return worker as unknown as PythonWorker;
}

const io = { onAbort() {}, emit() {}, activity() {}, conditionsStarted() {} } as unknown as AttemptIO;

function attempt(nodeId: string): PythonAttemptRequest {
  return {
    runId: "r",
    activationId: `${nodeId}@iter#1`,
    iteration: 1,
    attempt: 1,
    input: { text: nodeId, data: null },
    timeoutMs: null,
    node: { id: nodeId, kind: "python" } as PythonAttemptRequest["node"],
    conditions: null,
    conditionTimeoutMs: 30_000,
  };
}

describe("pythonExecutors: sending calls", () => {
  it("sends the calls started in one turn together, after the events written before them", async () => {
    const log: string[] = [];
    const executors = pythonExecutors(recordingWorker(log), {
      onOutput() {},
      beforeSend: () => log.push("write events"),
    });
    const results = ["a", "b", "c"].map((id) => {
      log.push(`start ${id}`);
      return executors.runPython!(attempt(id), io);
    });
    expect(log).toEqual(["start a", "start b", "start c"]); // nothing is sent within the turn
    await Promise.resolve();
    expect(log).toEqual([
      "start a",
      "start b",
      "start c",
      "write events",
      "invoke a",
      "invoke b",
      "invoke c",
    ]);
    expect(await Promise.all(results)).toMatchObject([
      { status: "completed", value: { text: "a" } },
      { status: "completed", value: { text: "b" } },
      { status: "completed", value: { text: "c" } },
    ]);
  });

  it("sends a large fan-out in batches while it starts, each after the events of the calls in it", async () => {
    const log: string[] = [];
    const executors = pythonExecutors(recordingWorker(log), {
      onOutput() {},
      beforeSend: () => log.push("write events"),
    });
    const count = SEND_BATCH * 2 + 10;
    const results: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) {
      log.push(`start n${i}`);
      results.push(executors.runPython!(attempt(`n${i}`), io));
    }
    // Within the turn, the first two batches have already gone to the worker.
    const invoked = () => log.filter((line) => line.startsWith("invoke")).length;
    expect(invoked()).toBe(SEND_BATCH * 2);
    await Promise.resolve();
    expect(invoked()).toBe(count);
    expect(log.filter((line) => line === "write events")).toHaveLength(3);
    // Every call is sent after an events write that came after its start, and in the order started.
    let written = -1;
    for (let i = 0; i < log.length; i++) {
      if (log[i] === "write events") written = i;
      const invoke = /^invoke (n\d+)$/.exec(log[i]!);
      if (invoke !== null) expect(log.indexOf(`start ${invoke[1]}`)).toBeLessThan(written);
    }
    expect(log.filter((line) => line.startsWith("invoke")).map((line) => line.slice(7))).toEqual(
      Array.from({ length: count }, (_, i) => `n${i}`),
    );
    expect(await Promise.all(results)).toHaveLength(count);
  });
});
