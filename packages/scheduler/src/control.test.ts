import { describe, expect, it } from "vitest";
import type { EngineEvent } from "./events";
import {
  agent,
  chainDef,
  def,
  edge,
  FakeFailure,
  type FakeFn,
  flush,
  harness,
  idle,
  py,
  recordingSink,
  when,
} from "./testing";

const sleepy =
  (ms: number, text?: string): FakeFn =>
  async (_, ctx) => {
    await ctx.sleep(ms);
    return text ?? ctx.nodeId;
  };

/** s → fast (fails or not) ; s → slow (takes 100 s) ; each an output. */
function twoBranches() {
  return def({
    start: "s",
    outputs: ["s", "fast", "slow"],
    nodes: [py("s"), py("fast"), py("slow"), py("after")],
    edges: [edge("s", "fast"), edge("s", "slow"), edge("fast", "after")],
  });
}

const failing: FakeFn = () => {
  throw new Error("fast broke");
};

/** Types of the events after the first `node_failed`, to check what a policy did. */
const afterFailure = (events: EngineEvent[]) =>
  events
    .slice(events.findIndex((e) => e.type === "node_failed"))
    .map((e) => `${e.type}${"node_id" in e ? `:${e.node_id}` : ""}`);

describe("run deadline and cancellation", () => {
  it("cancels with deadline_exceeded, aborting in-flight attempts and recording them before the end event", async () => {
    const h = harness(
      twoBranches(),
      { nodes: { fast: sleepy(1_000), slow: sleepy(100_000) } },
      { deadline: 1_000 + 50_000 },
    );
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "cancelled",
      reason: "deadline_exceeded",
      node_id: "",
      error: "",
    });
    expect(result.outputs.map((o) => o.node_id)).toEqual(["s", "fast"]);
    expect(h.clock.now() - 1_000).toBe(50_000);
    expect(h.sink.types().slice(-2)).toEqual(["node_cancelled", "workflow_run_end"]);
    expect(h.sink.of("node_cancelled")).toMatchObject([
      { node_id: "slow", reason: "deadline_exceeded", attempt: 1 },
    ]);
    expect(h.fakes.signal("slow")?.aborted).toBe(true);
  });

  it("ends at once when the deadline has already passed", async () => {
    const h = harness(chainDef(["a"]), {}, { deadline: 0 });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "cancelled", reason: "deadline_exceeded" });
    expect(h.fakes.calls).toHaveLength(0);
  });

  it("cancels on request with our reason code; later control calls are refused", async () => {
    const h = harness(twoBranches(), { nodes: { slow: sleepy(100_000) } });
    await flush();
    expect(h.run.cancel("interrupted")).toEqual({ ok: true });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "cancelled", reason: "interrupted" });
    expect(h.sink.of("node_cancelled")).toMatchObject([{ node_id: "slow", reason: "interrupted" }]);
    expect(h.run.cancel()).toMatchObject({ ok: false, code: "run_finished" });
    expect(h.run.retryNode("slow@iter#1")).toMatchObject({ ok: false, code: "run_finished" });
    expect(h.run.inspect().state).toBe("finished");
  });

  it("defaults the cancel reason to user_cancelled", async () => {
    const h = harness(twoBranches(), { nodes: { slow: sleepy(100_000) } });
    await flush();
    h.run.cancel();
    expect(await h.finish()).toMatchObject({ outcome: "cancelled", reason: "user_cancelled" });
  });
});

describe("failure policies", () => {
  it("fail: a node that cannot retry ends the run; in-flight branches are cancelled and recorded before the end", async () => {
    const h = harness(twoBranches(), { nodes: { fast: failing, slow: sleepy(100_000) } });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      node_id: "fast",
      activation_id: "fast@iter#1",
      error: "fast broke",
      error_class: "exception",
      reason: "",
    });
    expect(afterFailure(h.sink.events)).toEqual([
      "node_failed:fast",
      "node_cancelled:slow",
      "workflow_run_end:fast",
    ]);
    expect(h.sink.of("node_cancelled")).toMatchObject([{ reason: "run_failed" }]);
    expect(h.clock.now()).toBe(1_000);
  });

  it("pause: the failed node awaits retry while other branches go on; retryNode reruns it", async () => {
    let broken = true;
    const h = harness(
      twoBranches(),
      {
        nodes: {
          fast: (_, ctx) => {
            if (broken) throw new Error(`attempt ${ctx.attempt} broke`);
            return "fixed";
          },
          slow: sleepy(100_000),
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    expect(h.sink.of("node_awaiting_retry")).toMatchObject([
      { activation_id: "fast@iter#1", phase: "node", error_class: "exception" },
    ]);
    // The other branch finished meanwhile; the run waits for the user.
    expect(h.sink.of("node_completed").map((e) => e.node_id)).toEqual(["s", "slow"]);
    expect(h.run.inspect()).toMatchObject({
      state: "running",
      activations: [{ node_id: "fast", activation_id: "fast@iter#1", state: "awaiting_retry", attempts: 1 }],
    });
    broken = false;
    expect(h.run.retryNode("fast@iter#1")).toEqual({ ok: true });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed" });
    expect(result.outputs.map((o) => [o.node_id, o.text])).toEqual([
      ["s", "s"],
      ["fast", "fixed"],
      ["slow", "slow"],
    ]);
    expect(h.sink.of("node_retried")).toMatchObject([{ activation_id: "fast@iter#1", phase: "node" }]);
    expect(
      h.sink
        .of("attempt_started")
        .filter((e) => e.node_id === "fast")
        .map((e) => e.attempt),
    ).toEqual([1, 2]);
  });

  it("pause: a manual retry gives a fresh round of automatic retries, attempt numbers keep counting", async () => {
    const h = harness(
      def({ start: "n", outputs: ["n"], nodes: [py("n", { retry: { max_attempts: 2, backoff: 0 } })] }),
      {
        nodes: {
          n: (_, ctx) => {
            if (ctx.attempt <= 4) throw new Error(`attempt ${ctx.attempt} broke`);
            return "ok";
          },
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    expect(h.fakes.calls.map((c) => c.attempt)).toEqual([1, 2]);
    expect(h.run.retryNode("n@iter#1").ok).toBe(true);
    await idle(h.clock);
    expect(h.fakes.calls.map((c) => c.attempt)).toEqual([1, 2, 3, 4]);
    expect(h.sink.of("node_awaiting_retry")).toHaveLength(2);
    expect(h.run.retryNode("n@iter#1").ok).toBe(true);
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "ok" }] });
    expect(h.sink.of("attempt_failed").map((e) => e.will_retry)).toEqual([true, false, true, false]);
  });

  it("pause: retrying a Python node that failed in its outgoing condition reruns the entire function", async () => {
    let raise = true;
    const h = harness(
      def({ start: "s", outputs: ["x"], nodes: [py("s"), py("x")], edges: [when("s", "x")] }),
      {
        batch: true,
        conditions: {
          "s->x": () => {
            if (raise) throw new Error("cond broke");
            return true;
          },
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    expect(h.sink.of("node_awaiting_retry")).toMatchObject([
      { node_id: "s", phase: "node", error_class: "condition_failed" },
    ]);
    raise = false;
    h.run.retryNode("s@iter#1");
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.fakes.calls.filter((c) => c.kind === "python").map((c) => `${c.id}.${c.attempt}`)).toEqual([
      "s.1",
      "s.2",
      "x.1",
    ]);
  });

  it("pause: an agent that finished but failed in a later step (a condition) starts over from its input on retry", async () => {
    let raise = true;
    const h = harness(
      def({ start: "a", outputs: ["x"], nodes: [agent("a"), py("x")], edges: [when("a", "x")] }),
      {
        conditions: {
          "a->x": () => {
            if (raise) throw new Error("cond broke");
            return true;
          },
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    raise = false;
    expect(h.run.retryNode("a@iter#1").ok).toBe(true);
    expect((await h.finish()).outcome).toBe("completed");
    const agentRequests = h.fakes.requests.filter((r) => r.node.id === "a");
    expect(agentRequests.map((r) => [r.attempt, "continueFrom" in r ? r.continueFrom : "-"])).toEqual([
      [1, null],
      [2, null],
    ]);
  });

  it("refuses retryNode for unknown activations and for activations that are not awaiting retry", async () => {
    const h = harness(twoBranches(), { nodes: { slow: sleepy(100_000) } }, { policy: "pause" });
    await flush();
    expect(h.run.retryNode("nope@iter#1")).toMatchObject({ ok: false, code: "unknown_activation" });
    expect(h.run.retryNode("slow@iter#1")).toMatchObject({ ok: false, code: "not_awaiting_retry" });
    expect(h.run.retryNode("s@iter#1")).toMatchObject({ ok: false, code: "not_awaiting_retry" });
    h.run.cancel();
    await h.finish();
  });

  it("fail_fast: nothing new starts, running attempts finish, then the run fails", async () => {
    const h = harness(
      twoBranches(),
      { nodes: { fast: failing, slow: sleepy(100_000) } },
      { policy: "fail_fast" },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "fast" });
    // slow was running: it finished (and stays an output); nothing was cancelled.
    expect(h.clock.now() - 1_000).toBe(100_000);
    expect(result.outputs.map((o) => o.node_id)).toEqual(["s", "slow"]);
    expect(h.sink.of("node_cancelled")).toEqual([]);
  });

  it("fail_fast: ready nodes that have not started are cancelled", async () => {
    const h = harness(
      def({
        start: "s",
        outputs: ["b2"],
        nodes: [py("s"), py("a"), py("b"), py("b2")],
        edges: [edge("s", "a"), edge("s", "b"), edge("b", "b2")],
      }),
      {
        nodes: {
          a: async (_, ctx) => {
            await ctx.sleep(5);
            return failing(_, ctx);
          },
          b: sleepy(10),
        },
      },
      { policy: "fail_fast" },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "a" });
    expect(h.sink.of("node_cancelled")).toMatchObject([
      { node_id: "b2", reason: "run_failed", attempt: null },
    ]);
    expect(h.fakes.calls.map((c) => c.id)).toEqual(["s", "a", "b"]);
  });

  it("continue: independent branches finish, downstream of the failure is cancelled, the run ends failed", async () => {
    const h = harness(
      twoBranches(),
      { nodes: { fast: failing, slow: sleepy(100_000) } },
      { policy: "continue" },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "fast", error: "fast broke" });
    expect(result.outputs.map((o) => o.node_id)).toEqual(["s", "slow"]);
    expect(h.sink.of("node_cancelled")).toMatchObject([{ node_id: "after", reason: "upstream_failed" }]);
  });
});

describe("control surface", () => {
  it("skipNode on an awaiting node skips it; downstream that depends only on it is skipped", async () => {
    const h = harness(twoBranches(), { nodes: { fast: failing } }, { policy: "pause" });
    await idle(h.clock);
    expect(h.run.skipNode("fast@iter#1", { note: "not needed" })).toEqual({ ok: true });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.sink.of("node_skipped")).toMatchObject([
      { node_id: "fast", reason: "user_skipped", note: "not needed", value: null },
      { node_id: "after", reason: "no_input" },
    ]);
    expect(result.outputs.map((o) => o.node_id)).toEqual(["s", "slow"]);
  });

  it("skipNode with a value passes it downstream in the node's place (not an output)", async () => {
    let seen: unknown = null;
    const h = harness(
      twoBranches(),
      {
        nodes: {
          fast: failing,
          after: (input) => {
            seen = input;
            return "after";
          },
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    const value = { text: "handoff note", data: { summary: "skipped" } };
    expect(h.run.skipNode("fast@iter#1", { note: "handoff note", value }).ok).toBe(true);
    await h.finish();
    expect(seen).toBe(value);
    expect(h.sink.of("node_skipped")[0]).toMatchObject({ node_id: "fast", reason: "user_skipped", value });
  });

  it("skipNode aborts a running attempt", async () => {
    const h = harness(twoBranches(), { nodes: { slow: sleepy(100_000) } });
    await flush();
    expect(h.run.skipNode("slow@iter#1").ok).toBe(true);
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.fakes.signal("slow")?.aborted).toBe(true);
    expect(h.clock.now()).toBe(1_000);
    expect(h.run.skipNode("slow@iter#1")).toMatchObject({ ok: false, code: "run_finished" });
  });

  it("pause() holds new attempts until resume(); in-flight ones continue", async () => {
    const h = harness(chainDef(["a", "b", "c"]), { nodes: { a: sleepy(10) } });
    await flush();
    expect(h.run.pause()).toEqual({ ok: true });
    expect(h.run.pause()).toMatchObject({ ok: false, code: "already_paused" });
    await idle(h.clock);
    expect(h.fakes.calls.map((c) => c.id)).toEqual(["a"]);
    expect(h.run.inspect()).toMatchObject({
      state: "paused",
      activations: [{ node_id: "b", state: "queued", attempts: 0 }],
    });
    expect(h.run.resume()).toEqual({ ok: true });
    expect(h.run.resume()).toMatchObject({ ok: false, code: "not_paused" });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.sink.types()).toContain("workflow_run_paused");
    expect(h.sink.types()).toContain("workflow_run_resumed");
  });

  it("approveNode lets an approval gate start", async () => {
    const h = harness(chainDef(["a", "b"]), {}, { approvals: ["b"] });
    await idle(h.clock);
    expect(h.run.inspect().activations).toMatchObject([{ node_id: "b", state: "waiting_approval" }]);
    expect(h.run.approveNode("a@iter#1")).toMatchObject({ ok: false, code: "not_waiting_approval" });
    expect(h.run.approveNode("b@iter#1")).toEqual({ ok: true });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.sink.types()).toEqual(expect.arrayContaining(["node_waiting_approval", "node_approved"]));
  });
});

describe("run-ending errors", () => {
  it("worker_lost ends the run at once, even under the pause policy", async () => {
    const h = harness(
      twoBranches(),
      {
        nodes: {
          fast: () => {
            throw new FakeFailure("worker_lost", true, "the Python worker exited with signal SIGKILL");
          },
          slow: sleepy(100_000),
        },
      },
      { policy: "pause" },
    );
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "worker_lost",
      node_id: "fast",
      error_class: "worker_lost",
      reason: "",
    });
    expect(h.sink.of("node_cancelled")).toMatchObject([{ node_id: "slow", reason: "worker_lost" }]);
    expect(h.fakes.calls.filter((c) => c.id === "fast")).toHaveLength(1);
  });

  it("storage_failed: a sink that throws ends the run without crashing", async () => {
    const sink = recordingSink({ failAt: 8, error: new Error("ENOSPC: no space left on device") });
    const h = harness(twoBranches(), { nodes: { slow: sleepy(100_000) } }, { sink });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "storage_failed", reason: "", node_id: "" });
    expect(result.error).toContain("ENOSPC");
    expect(sink.types()).toHaveLength(8);
    // The in-flight attempt was aborted; no time passed.
    expect(h.fakes.signal("slow")?.aborted).toBe(true);
    expect(h.clock.now()).toBe(1_000);
  });

  it("storage_failed: a sink whose final flush fails", async () => {
    const sink = { ...recordingSink(), flush: () => Promise.reject(new Error("fsync failed")) };
    const h = harness(chainDef(["a"]), {}, { sink });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "storage_failed" });
    expect(result.error).toContain("fsync failed");
    expect(result.outputs.map((o) => o.node_id)).toEqual(["a"]);
  });

  it("storage_failed: a sink that refuses writes records the true end through writeLast", async () => {
    const last: EngineEvent[] = [];
    const sink = {
      ...recordingSink({ failAt: 8, error: new Error("EIO: i/o error, write") }),
      writeLast: (event: EngineEvent) => last.push(event),
    };
    const h = harness(twoBranches(), { nodes: { slow: sleepy(100_000) } }, { sink });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "storage_failed" });
    expect(last).toHaveLength(1);
    expect(last[0]).toMatchObject({ type: "workflow_run_end", outcome: "storage_failed" });
  });

  it("storage_failed: a final flush that fails adds a storage_failed end through writeLast", async () => {
    const last: EngineEvent[] = [];
    const base = recordingSink();
    const sink = {
      ...base,
      flush: () => Promise.reject(new Error("ENOSPC: no space left on device")),
      writeLast: (event: EngineEvent) => last.push(event),
    };
    const h = harness(chainDef(["a"]), {}, { sink });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "storage_failed", error: expect.stringContaining("ENOSPC") });
    const completed = base.events.find((e) => e.type === "workflow_run_end");
    expect(completed).toMatchObject({ outcome: "completed" });
    // The last end tells the truth, numbered after the first.
    expect(last).toMatchObject([
      { type: "workflow_run_end", outcome: "storage_failed", seq: completed!.seq + 1 },
    ]);
  });

  it("awaits a successful flush before settling the result", async () => {
    let flushed = false;
    const sink = {
      ...recordingSink(),
      flush: async () => {
        flushed = true;
      },
    };
    const h = harness(chainDef(["a"]), {}, { sink });
    const result = await h.finish();
    expect(flushed).toBe(true);
    expect(result.outcome).toBe("completed");
  });
});

describe("node context: emit and ask", () => {
  it("records emit text, and drops writes of an attempt that timed out", async () => {
    const h = harness(
      def({
        start: "n",
        outputs: ["n"],
        nodes: [py("n", { timeout: 1, retry: { max_attempts: 2, backoff: 0 } })],
      }),
      {
        nodes: {
          n: async (_, ctx) => {
            ctx.io.emit(`start ${ctx.attempt}`);
            if (ctx.attempt === 1) {
              await ctx.sleep(5_000);
              ctx.io.emit("too late");
            }
            return "done";
          },
        },
      },
    );
    await h.finish();
    expect(h.sink.of("emit").map((e) => [e.attempt, e.text])).toEqual([
      [1, "start 1"],
      [2, "start 2"],
    ]);
  });

  it("answers unavailable without an ask handler (the CLI) and records both summaries", async () => {
    const h = harness(chainDef(["n"]), {
      nodes: {
        n: async (_, ctx) => {
          const response = await ctx.io.ask({
            questions: [{ question: "Deploy?", header: "", options: [], multi_select: false }],
          });
          if (response.status === "unavailable")
            throw new FakeFailure("ask_unavailable", false, "the CLI cannot ask");
          return "asked";
        },
      },
    });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", error_class: "ask_unavailable" });
    expect(h.sink.of("question")).toMatchObject([{ question_id: 1, summary: "Deploy?", attempt: 1 }]);
    expect(h.sink.of("answer")).toMatchObject([
      { question_id: 1, status: "unavailable", summary: "(unavailable)" },
    ]);
  });

  it("forwards questions to the ask handler and cuts the summaries to 512 characters", async () => {
    const long = "q".repeat(2_000);
    const h = harness(
      chainDef(["n"]),
      {
        nodes: {
          n: async (_, ctx) => {
            const response = await ctx.io.ask({
              questions: [
                {
                  question: long,
                  header: "Areas",
                  options: [{ label: "API", description: "" }],
                  multi_select: true,
                },
              ],
            });
            return response.status === "answered" ? response.answers[0]!.selected.join() : "none";
          },
        },
      },
      {
        ask: async () => ({ status: "answered", answers: [{ selected: ["API"], text: "a".repeat(1_000) }] }),
      },
    );
    const result = await h.finish();
    expect(result.outputs[0]?.text).toBe("API");
    const question = h.sink.of("question")[0]!;
    const answer = h.sink.of("answer")[0]!;
    expect(Array.from(question.summary)).toHaveLength(512);
    expect(question.summary.startsWith("Areas: qqq")).toBe(true);
    expect(Array.from(answer.summary)).toHaveLength(512);
    expect(answer).toMatchObject({ status: "answered" });
    expect(answer.summary.startsWith("API — aaa")).toBe(true);
  });

  it("records agent activity: text, tool calls and usage, in order", async () => {
    const call = {
      kind: "tool_call",
      tool_call_id: "t1",
      title: "read_file src/index.ts",
      tool_kind: "read",
      status: "completed",
      input: { path: "src/index.ts" },
      result: "42 lines",
    } as const;
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: null,
    };
    const h = harness(def({ start: "a", outputs: ["a"], nodes: [agent("a")] }), {
      nodes: {
        a: (_, ctx) => {
          ctx.io.activity({ kind: "text", text: "Looking at the entry point" });
          ctx.io.activity(call);
          ctx.io.activity({ kind: "usage", usage });
          return "ok";
        },
      },
    });
    await h.finish();
    expect(h.sink.of("agent_activity").map((e) => e.activity)).toEqual([
      { kind: "text", text: "Looking at the entry point" },
      call,
      { kind: "usage", usage },
    ]);
    expect(h.sink.of("agent_activity").every((e) => e.attempt === 1)).toBe(true);
  });
});
