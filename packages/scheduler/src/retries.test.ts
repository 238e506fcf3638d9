import { describe, expect, it } from "vitest";
import { agent, def, edge, FakeFailure, harness, py } from "./testing";

const single = (node: ReturnType<typeof py>) => def({ start: node.id, outputs: [node.id], nodes: [node] });

describe("timeouts and retries", () => {
  it("times an attempt out, retries after the backoff on the clock, and resets the timer per attempt", async () => {
    const h = harness(single(py("n", { timeout: 5, retry: { max_attempts: 3, backoff: 2 } })), {
      nodes: {
        n: async (_, ctx) => {
          if (ctx.attempt === 1)
            await ctx.sleep(60_000); // times out at 5 s
          else await ctx.sleep(4_000); // within a fresh 5 s
          return `attempt ${ctx.attempt}`;
        },
      },
    });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "attempt 2" }] });
    expect(h.fakes.calls.map((c) => [c.attempt, c.at - 1_000])).toEqual([
      [1, 0],
      [2, 7_000],
    ]);
    expect(h.sink.of("attempt_failed")).toMatchObject([
      { attempt: 1, error: { class: "timeout", retryable: true }, will_retry: true, retry_delay_ms: 2_000 },
    ]);
    expect(h.sink.of("node_completed")).toMatchObject([{ attempt: 2 }]);
    // The first attempt's signal was aborted when it timed out.
    expect(h.fakes.signal("n", 1)?.aborted).toBe(true);
  });

  it("retries exceptions until Retry.max_attempts, then fails", async () => {
    const h = harness(single(py("n", { retry: { max_attempts: 3, backoff: 1 } })), {
      nodes: {
        n: () => {
          throw new Error("always");
        },
      },
    });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "n", error_class: "exception" });
    expect(h.fakes.calls.map((c) => [c.attempt, c.at - 1_000])).toEqual([
      [1, 0],
      [2, 1_000],
      [3, 2_000],
    ]);
    expect(h.sink.of("attempt_failed").map((e) => e.will_retry)).toEqual([true, true, false]);
  });

  it("runs a Python node once by default", async () => {
    const h = harness(single(py("n")), {
      nodes: {
        n: () => {
          throw new Error("once");
        },
      },
    });
    await h.finish();
    expect(h.fakes.calls).toHaveLength(1);
    expect(h.sink.of("attempt_started")).toMatchObject([{ max_attempts: 1, timeout_ms: 300_000 }]);
  });

  it("applies the default 300 s Python timeout from the Definition", async () => {
    const h = harness(single(py("n")), { nodes: { n: () => new Promise(() => {}) } });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", error_class: "timeout" });
    expect(h.clock.now() - 1_000).toBe(300_000);
  });

  it("gives an agent three attempts with zero backoff by default, continuing its conversation", async () => {
    const h = harness(def({ start: "a", outputs: ["a"], nodes: [agent("a")] }), {
      nodes: {
        a: (_, ctx) => {
          if (ctx.attempt < 3) throw new FakeFailure("exception", true, "dropped connection");
          return `continued from ${ctx.continueFrom}`;
        },
      },
    });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "continued from 2" }] });
    expect(h.fakes.calls.map((c) => c.at - 1_000)).toEqual([0, 0, 0]);
    expect(h.fakes.requests.map((r) => ("continueFrom" in r ? r.continueFrom : "-"))).toEqual([null, 1, 2]);
    expect(h.sink.of("attempt_started")).toMatchObject([{ max_attempts: 3, timeout_ms: null }, {}, {}]);
  });

  it("has no deadline with timeout=None", async () => {
    const h = harness(single(py("n", { timeout: null })), {
      nodes: {
        n: async (_, ctx) => {
          await ctx.sleep(10 * 3600_000);
          return "late";
        },
      },
    });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "late" }] });
  });

  describe("never retried, whatever Retry says", () => {
    const classes = [
      "value_not_serializable",
      "value_too_large",
      "ask_unavailable",
      "protocol_limit",
      "condition_failed",
      "combine_failed",
      "internal_error",
    ];
    for (const cls of classes) {
      it(cls, async () => {
        const h = harness(single(py("n", { retry: { max_attempts: 5, backoff: 0 } })), {
          nodes: {
            n: () => {
              // Even an executor that marks it retryable does not get a retry for these classes.
              throw new FakeFailure(cls, true);
            },
          },
        });
        const result = await h.finish();
        expect(result).toMatchObject({ outcome: "node_failed", error_class: cls });
        expect(h.fakes.calls).toHaveLength(1);
      });
    }

    it("an error the executor reports as not retryable (e.g. quota_exhausted)", async () => {
      const h = harness(
        def({ start: "a", outputs: ["a"], nodes: [agent("a", { retry: { max_attempts: 5, backoff: 0 } })] }),
        {
          nodes: {
            a: () => {
              throw new FakeFailure("quota_exhausted", false);
            },
          },
        },
      );
      const result = await h.finish();
      expect(result).toMatchObject({ outcome: "node_failed", error_class: "quota_exhausted" });
      expect(h.fakes.calls).toHaveLength(1);
    });
  });

  it("does not hold an agent slot during backoff", async () => {
    const ids = ["a1", "a2", "a3", "a4", "a5"];
    const h = harness(
      def({
        start: "s",
        outputs: ids,
        nodes: [py("s"), ...ids.map((id) => agent(id, { retry: { max_attempts: 2, backoff: 1 } }))],
        edges: ids.map((id) => edge("s", id)),
      }),
      {
        nodes: {
          a1: (_, ctx) => {
            if (ctx.attempt === 1) throw new Error("flaky");
            return "a1";
          },
          ...Object.fromEntries(
            ids.slice(1).map((id) => [
              id,
              async (_: unknown, ctx: { sleep(ms: number): Promise<boolean> }) => {
                await ctx.sleep(10_000);
                return id;
              },
            ]),
          ),
        },
      },
    );
    await h.finish();
    // a5 took a1's slot as soon as a1's first attempt failed.
    expect(h.fakes.calls.find((c) => c.id === "a5")!.at - 1_000).toBe(0);
    expect(h.fakes.calls.filter((c) => c.id === "a1").map((c) => c.at - 1_000)).toEqual([0, 10_000]);
  });
});
