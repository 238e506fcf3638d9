import { describe, expect, it } from "vitest";
import { RunView } from "./run-view";
import { agent, chainDef, def, drive, edge, flush, harness, join, py } from "./testing";

describe("RunView: inspect a run from its events alone", () => {
  it("matches the scheduler's view during a fan-out, and shows outputs and states as they settle", async () => {
    const branches = ["b1", "b2", "b3"];
    const h = harness(
      def({
        start: "s",
        outputs: ["s", "j"],
        nodes: [py("s"), ...branches.map((id) => py(id)), join("j", branches), py("j")],
        edges: [...branches.map((id) => edge("s", id)), edge("join:j", "j")],
      }),
      {
        nodes: {
          b2: async (_, ctx) => {
            await ctx.sleep(1_000);
            return "late";
          },
        },
      },
    );
    await drive(h.clock, flush());
    const view = new RunView(h.run.runId);
    for (const event of h.sink.events) view.apply(event);
    const mid = view.snapshot();
    expect(mid.state).toBe("running");
    expect(mid.outputs.map((o) => o.node_id)).toEqual(["s"]);
    const byId = Object.fromEntries(mid.activations.map((a) => [a.node_id, a.state]));
    expect(byId).toMatchObject({ s: "completed", b1: "completed", b2: "running", b3: "completed" });
    // What is live agrees with the scheduler's own snapshot.
    expect(
      mid.activations.filter((a) => !["completed", "skipped"].includes(a.state)).map((a) => a.activation_id),
    ).toEqual(h.run.inspect().activations.map((a) => a.activation_id));
    await h.finish();
    for (const event of h.sink.events) view.apply(event);
    const end = view.snapshot();
    expect(end).toMatchObject({ state: "finished", outcome: "completed" });
    expect(end.outputs.map((o) => o.node_id)).toEqual(["s", "j"]);
    expect(end.last_seq).toBe(h.sink.events.at(-1)!.seq);
  });

  it("shows pending questions with their full questions, waiting approvals, and sums usage over attempts", async () => {
    const usage = (n: number) => ({
      input_tokens: n,
      output_tokens: 1,
      total_tokens: n + 1,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: null,
    });
    const h = harness(
      def({
        start: "a",
        outputs: ["g"],
        nodes: [agent("a", { retry: { max_attempts: 2, backoff: 0 } }), py("g")],
        edges: [edge("a", "g")],
      }),
      {
        nodes: {
          a: async (_, ctx) => {
            ctx.io.activity({ kind: "usage", usage: usage(10 * ctx.attempt) });
            if (ctx.attempt === 1) throw new Error("flaky");
            await ctx.io.ask({
              questions: [{ question: "Ship it?", header: "", options: [], multi_select: false }],
            });
            return "a";
          },
        },
      },
      { approvals: ["g"], acceptAnswers: true },
    );
    await drive(h.clock, flush());
    const view = new RunView(h.run.runId);
    for (const event of h.sink.events) view.apply(event);
    const asking = view.snapshot();
    expect(asking.pending_questions).toMatchObject([
      { ask_id: "a@iter#1/2/1", questions: [{ question: "Ship it?" }] },
    ]);
    expect(asking.activations[0]).toMatchObject({ state: "running", attempts: 2 });
    expect(asking.usage).toMatchObject({ input_tokens: 30, output_tokens: 2, total_tokens: 32 });
    h.run.answer("a@iter#1/2/1", [{ selected: [], text: "yes" }]);
    await drive(h.clock, flush());
    for (const event of h.sink.events) view.apply(event);
    const gated = view.snapshot();
    expect(gated.pending_questions).toEqual([]);
    expect(gated.waiting_approvals).toEqual(["g@iter#1"]);
    h.run.approveNode("g@iter#1");
    await h.finish();
    for (const event of h.sink.events) view.apply(event);
    expect(view.snapshot().waiting_approvals).toEqual([]);
  });

  it("ignores events it has already folded", async () => {
    const h = harness(chainDef(["a"]));
    await h.finish();
    const view = new RunView(h.run.runId);
    for (const event of [...h.sink.events, ...h.sink.events]) view.apply(event);
    expect(view.snapshot().activations).toHaveLength(1);
  });
});
