import { describe, expect, it } from "vitest";
import { failureAction } from "./failure-policy";
import type { AskRequest, AskResponse } from "./interaction";
import { checkAnswers } from "./interaction";
import { agent, chainDef, def, drive, edge, FakeFailure, flush, harness, py } from "./testing";

const PICK: AskRequest = {
  questions: [
    {
      question: "Which area?",
      header: "Area",
      options: [
        { label: "API", description: "" },
        { label: "UI", description: "" },
      ],
      multi_select: false,
    },
  ],
};

/** A node that asks PICK and returns what it got (or fails as the CLI's executor would without an answer). */
function asker(record: AskResponse[] = []) {
  return async (_: unknown, ctx: { io: { ask(r: AskRequest): Promise<AskResponse> } }) => {
    const response = await ctx.io.ask(PICK);
    record.push(response);
    if (response.status !== "answered") throw new FakeFailure("ask_unavailable", false, response.status);
    return response.answers.map((a) => `${a.selected.join("+")}|${a.text}`).join(";");
  };
}

describe("answers given through the run (answer)", () => {
  it("a caller other than the starter answers; the question event carries the full questions", async () => {
    const h = harness(chainDef(["n"]), { nodes: { n: asker() } }, { acceptAnswers: true });
    await drive(h.clock, flush());
    const [question] = h.sink.of("question");
    expect(question).toMatchObject({ ask_id: "n@iter#1/1/1", question_id: 1, questions: PICK.questions });
    expect(h.run.pendingAsks()).toEqual([
      {
        ask_id: "n@iter#1/1/1",
        node_id: "n",
        activation_id: "n@iter#1",
        attempt: 1,
        question_id: 1,
        questions: PICK.questions,
      },
    ]);
    expect(h.run.answer("n@iter#1/1/1", [{ selected: ["UI"], text: "soon" }])).toEqual({ ok: true });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "UI|soon" }] });
    expect(h.sink.of("answer")).toMatchObject([{ ask_id: "n@iter#1/1/1", status: "answered" }]);
    expect(h.run.pendingAsks()).toEqual([]);
  });

  it("refuses a label the question does not offer, and two labels on a single-select; the node keeps waiting", async () => {
    const h = harness(chainDef(["n"]), { nodes: { n: asker() } }, { acceptAnswers: true });
    await drive(h.clock, flush());
    const wrong = h.run.answer("n@iter#1/1/1", [{ selected: ["Storage"], text: "" }]);
    expect(wrong).toMatchObject({ ok: false, code: "answer_invalid" });
    expect(wrong.ok === false && wrong.message).toMatch(/"Storage".*does not offer.*"API", "UI"/);
    const two = h.run.answer("n@iter#1/1/1", [{ selected: ["API", "UI"], text: "" }]);
    expect(two).toMatchObject({ ok: false, code: "answer_invalid" });
    expect(two.ok === false && two.message).toMatch(/single-select/);
    const count = h.run.answer("n@iter#1/1/1", []);
    expect(count).toMatchObject({ ok: false, code: "answer_invalid" });
    expect(h.sink.of("answer")).toEqual([]);
    expect(h.run.inspect().activations).toMatchObject([{ node_id: "n", state: "running" }]);
    expect(h.run.answer("n@iter#1/1/1", [{ selected: ["API"], text: "" }])).toEqual({ ok: true });
    expect(await h.finish()).toMatchObject({ outcome: "completed", outputs: [{ text: "API|" }] });
  });

  it("refuses an unknown ask, an answered one, and answers after the run ended", async () => {
    const h = harness(chainDef(["n"]), { nodes: { n: asker() } }, { acceptAnswers: true });
    await drive(h.clock, flush());
    expect(h.run.answer("n@iter#1/1/9", [{ selected: [], text: "x" }])).toMatchObject({
      ok: false,
      code: "unknown_question",
    });
    expect(h.run.answer("n@iter#1/1/1", [{ selected: [], text: "mine" }])).toEqual({ ok: true });
    expect(h.run.answer("n@iter#1/1/1", [{ selected: [], text: "again" }])).toMatchObject({
      ok: false,
      code: "unknown_question",
    });
    await h.finish();
    expect(h.run.answer("n@iter#1/1/1", [{ selected: [], text: "late" }])).toMatchObject({
      ok: false,
      code: "run_finished",
    });
  });

  it("ends a waiting ask when its attempt times out: recorded cancelled, the executor sees cancelled", async () => {
    const seen: AskResponse[] = [];
    const h = harness(
      def({ start: "n", outputs: ["n"], nodes: [py("n", { timeout: 5 })] }),
      { nodes: { n: asker(seen) } },
      { acceptAnswers: true },
    );
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", error_class: "timeout" });
    expect(h.sink.of("answer")).toMatchObject([{ status: "cancelled", summary: "(cancelled)" }]);
    expect(seen).toEqual([{ status: "cancelled" }]);
  });
});

describe("the host's ask handler", () => {
  it("fails the node with ask_handler_failed and the handler's own message when it throws", async () => {
    const h = harness(
      chainDef(["n"]),
      { nodes: { n: asker() } },
      {
        ask: async () => {
          throw new Error("the dialog service is down");
        },
      },
    );
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      error_class: "ask_handler_failed",
      error: "the ask handler failed: the dialog service is down",
    });
    expect(h.sink.of("answer")).toMatchObject([{ status: "failed" }]);
    expect(h.sink.of("attempt_failed")).toMatchObject([{ will_retry: false }]);
  });

  it("fails the node when the handler returns garbage or answers that do not fit", async () => {
    for (const [reply, pattern] of [
      [{ nope: true }, /returned \{"nope":true\}/],
      [{ status: "answered", answers: [{ selected: ["Nope"], text: "" }] }, /do not fit.*"Nope"/],
    ] as const) {
      const h = harness(chainDef(["n"]), { nodes: { n: asker() } }, { ask: async () => reply as never });
      const result = await h.finish();
      expect(result).toMatchObject({ outcome: "node_failed", error_class: "ask_handler_failed" });
      expect(result.error).toMatch(pattern);
    }
  });

  it("lets whichever valid answer comes first win: answer() before a slow handler", async () => {
    let release: (r: AskResponse) => void = () => {};
    const h = harness(
      chainDef(["n"]),
      { nodes: { n: asker() } },
      {
        acceptAnswers: true,
        ask: () => new Promise<AskResponse>((resolve) => (release = resolve)),
      },
    );
    await drive(h.clock, flush());
    expect(h.run.answer("n@iter#1/1/1", [{ selected: ["API"], text: "" }])).toEqual({ ok: true });
    release({ status: "answered", answers: [{ selected: ["UI"], text: "" }] });
    expect(await h.finish()).toMatchObject({ outputs: [{ text: "API|" }] });
    expect(h.sink.of("answer")).toHaveLength(1);
  });
});

describe("checkAnswers", () => {
  const multi = { question: "Areas?", header: "", options: PICK.questions[0]!.options, multi_select: true };
  it("puts selected labels in option order and accepts typed text and skips", () => {
    expect(checkAnswers([multi], [{ selected: ["UI", "API"], text: "" }])).toEqual({
      ok: true,
      answers: [{ selected: ["API", "UI"], text: "" }],
    });
    expect(checkAnswers([multi], [{ selected: [], text: "" }])).toMatchObject({ ok: true });
    expect(checkAnswers([multi], [{ selected: ["API", "API"], text: "" }])).toMatchObject({ ok: false });
    expect(checkAnswers([multi], [{ selected: "API", text: "" }])).toMatchObject({ ok: false });
  });
});

describe("slots and sequence numbers", () => {
  it("records attempt_queued when an agent waits for one of the run's slots", async () => {
    const nodes = ["s", "a1", "a2", "a3"];
    const h = harness(
      def({
        start: "s",
        outputs: ["a1", "a2", "a3"],
        nodes: [py("s"), agent("a1"), agent("a2"), agent("a3")],
        edges: nodes.slice(1).map((id) => edge("s", id)),
      }),
      {},
      { maxConcurrentAgents: 2 },
    );
    await h.finish();
    expect(h.sink.of("attempt_queued")).toMatchObject([
      { node_id: "a3", attempt: 1, reason: "agent_limit", limit: 2 },
    ]);
  });

  it("numbers events from firstSeq, so a host's own events can come first", async () => {
    const h = harness(chainDef(["a", "b"]), {}, { firstSeq: 3 });
    await h.finish();
    const seqs = h.sink.events.map((e) => e.seq);
    expect(seqs[0]).toBe(3);
    expect(seqs).toEqual(seqs.map((_, i) => i + 3));
  });
});

describe("failure policies map to actions", () => {
  it.each([
    ["fail", "node_failed", "end"],
    ["pause", "node_failed", "await_retry"],
    ["pause", "loop_exhausted", "end"],
    ["pause", "worker_lost", "end"],
    ["fail_fast", "node_failed", "stop_new_work"],
    ["continue", "node_failed", "cut_off"],
    ["continue", "worker_lost", "end"],
  ] as const)("%s + %s → %s", (policy, outcome, action) => {
    expect(failureAction(policy, outcome)).toBe(action);
  });
});
