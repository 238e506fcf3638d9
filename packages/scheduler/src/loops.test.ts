import { describe, expect, it } from "vitest";
import { def, edge, type FakeScript, harness, idle, loop, py, when } from "./testing";

/** pre → L[ inc (entry) → check (exit) ] → post */
function counterDef(
  options: { max_iterations?: number; on_exhausted?: "continue" | "fail"; extraBody?: boolean } = {},
) {
  const body = [py("inc", { scope: "L" }), py("check", { scope: "L" })];
  const bodyEdges = [edge("inc", "check", null, "L")];
  if (options.extraBody) {
    body.push(py("side", { scope: "L" }));
    bodyEdges.push(edge("inc", "side", null, "L"));
  }
  return def({
    start: "pre",
    outputs: ["post"],
    nodes: [py("pre"), loop("L", "inc", "check", options), ...body, py("post")],
    edges: [edge("pre", "L"), ...bodyEdges, edge("L", "post")],
  });
}

const counting: FakeScript = {
  nodes: {
    pre: () => ({ text: "0", data: 0 }),
    inc: (input) => ({ text: String(Number(input.text) + 1), data: Number(input.text) + 1 }),
    check: (input) => input,
    post: (input) => input,
  },
};

describe("loop", () => {
  it("rule 1–3: loop input to the entry first, then each exit value; until decides; fresh activations per iteration", async () => {
    const seen: string[] = [];
    const h = harness(counterDef(), {
      ...counting,
      nodes: {
        ...counting.nodes,
        inc: (input, ctx) => {
          seen.push(`${ctx.activationId}:${input.text}`);
          return counting.nodes!.inc!(input, ctx);
        },
      },
      until: { L: (value) => value.data === 3 },
    });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "completed",
      outputs: [{ node_id: "post", text: "3", data: 3 }],
    });
    expect(seen).toEqual(["inc@iter#1:0", "inc@iter#2:1", "inc@iter#3:2"]);
    expect(
      h.sink.of("loop_iteration").map((e) => [e.activation_id, e.loop_iteration, e.max_iterations]),
    ).toEqual([
      ["L@iter#1", 1, 10],
      ["L@iter#1", 2, 10],
      ["L@iter#1", 3, 10],
    ]);
    expect(h.sink.of("loop_until").map((e) => [e.loop_iteration, e.stop])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(h.fakes.calls.filter((c) => c.kind === "until").map((c) => c.attempt)).toEqual([1, 2, 3]);
    const checks = h.sink.of("node_completed").filter((e) => e.node_id === "check");
    expect(checks.map((e) => [e.activation_id, e.iteration, e.loop_id])).toEqual([
      ["check@iter#1", 1, "L"],
      ["check@iter#2", 2, "L"],
      ["check@iter#3", 3, "L"],
    ]);
    // The second iteration's entry got its input from the first iteration's exit.
    expect(h.sink.of("node_started").find((e) => e.activation_id === "inc@iter#2")?.sources).toEqual([
      "check@iter#1",
    ]);
    expect(h.sink.of("node_started").find((e) => e.activation_id === "inc@iter#1")?.sources).toEqual([
      "L@iter#1",
    ]);
  });

  it("always runs at least once (until is checked after the iteration)", async () => {
    const h = harness(counterDef({ max_iterations: 1 }), { ...counting, until: { L: () => true } });
    const result = await h.finish();
    expect(result.outputs[0]?.text).toBe("1");
  });

  it("ends an iteration only when every body node has settled, not just the exit", async () => {
    const h = harness(counterDef({ extraBody: true }), {
      ...counting,
      nodes: {
        ...counting.nodes,
        side: async (_, ctx) => {
          await ctx.sleep(7_000);
          return "side";
        },
      },
      until: { L: (_, iteration) => iteration === 2 },
    });
    await h.finish();
    const untils = h.fakes.calls.filter((c) => c.kind === "until").map((c) => c.at - 1_000);
    expect(untils).toEqual([7_000, 14_000]);
  });

  it("fails the loop node with loop_no_value when the exit is skipped", async () => {
    const d = def({
      start: "L",
      outputs: ["L"],
      nodes: [loop("L", "inc", "check"), py("inc", { scope: "L" }), py("check", { scope: "L" })],
      edges: [when("inc", "check", "L")],
    });
    const h = harness(d, { conditions: { "inc->check": () => false } });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "node_failed",
      node_id: "L",
      error_class: "loop_no_value",
      activation_id: "L@iter#1",
    });
    expect(h.fakes.calls.filter((c) => c.kind === "until")).toHaveLength(0);
  });

  it("fails the loop when until raises; a manual retry re-evaluates only until, keeping progress", async () => {
    let raise = true;
    const h = harness(
      counterDef(),
      {
        ...counting,
        until: {
          L: (value) => {
            if (value.data === 2 && raise) throw new Error("until broke");
            return value.data === 2;
          },
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    expect(h.sink.of("node_failed")).toMatchObject([
      { node_id: "L", phase: "until", error: { class: "until_failed" } },
    ]);
    expect(h.sink.of("node_awaiting_retry")).toMatchObject([{ activation_id: "L@iter#1", phase: "until" }]);
    const bodyRuns = h.fakes.calls.filter((c) => c.kind === "python").length;
    raise = false;
    expect(h.run.retryNode("L@iter#1")).toEqual({ ok: true });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "2" }] });
    // Only `until` and `post` ran after the retry: no body node reran.
    expect(h.fakes.calls.filter((c) => c.kind === "python").length).toBe(bodyRuns + 1);
    expect(h.fakes.calls.filter((c) => c.kind === "until").map((c) => c.attempt)).toEqual([1, 2, 2]);
  });

  it("gives until its own 30 s limit", async () => {
    const h = harness(counterDef(), { ...counting, until: { L: () => new Promise<boolean>(() => {}) } });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "node_failed", node_id: "L", error_class: "until_timeout" });
    expect(h.clock.now() - 1_000).toBe(30_000);
  });

  it('on_exhausted="continue" ends the loop with the last exit value', async () => {
    const h = harness(counterDef({ max_iterations: 3 }), { ...counting, until: { L: () => false } });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "3" }] });
    expect(h.sink.of("loop_until").at(-1)).toMatchObject({ loop_iteration: 3, stop: false, exhausted: true });
  });

  it('on_exhausted="fail" ends the run with loop_exhausted', async () => {
    const h = harness(counterDef({ max_iterations: 2, on_exhausted: "fail" }), {
      ...counting,
      until: { L: () => false },
    });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "loop_exhausted",
      node_id: "L",
      error_class: "loop_exhausted",
      reason: "",
    });
    expect(h.fakes.calls.filter((c) => c.id === "inc")).toHaveLength(2);
  });

  it("does not count retries inside the body as iterations", async () => {
    const d = counterDef({ max_iterations: 2 });
    const inc = d.nodes.find((n) => n.id === "inc")!;
    if (inc.kind === "python") inc.retry = { max_attempts: 3, backoff: 0 };
    const h = harness(d, {
      ...counting,
      nodes: {
        ...counting.nodes,
        inc: (input, ctx) => {
          if (ctx.attempt < 3) throw new Error("flaky");
          return counting.nodes!.inc!(input, ctx);
        },
      },
      until: { L: (value) => value.data === 2 },
    });
    const result = await h.finish();
    expect(result).toMatchObject({ outcome: "completed", outputs: [{ text: "2" }] });
    expect(h.sink.of("loop_iteration")).toHaveLength(2);
    // Iteration 1 used attempts 1–3; iteration 2's fresh activation starts again at attempt 1.
    expect(h.fakes.calls.filter((c) => c.id === "inc").map((c) => `${c.activationId}.${c.attempt}`)).toEqual([
      "inc@iter#1.1",
      "inc@iter#1.2",
      "inc@iter#1.3",
      "inc@iter#2.1",
      "inc@iter#2.2",
      "inc@iter#2.3",
    ]);
  });

  it("re-evaluates only a loop's failed outgoing conditions on manual retry", async () => {
    let raise = true;
    const d = def({
      start: "L",
      outputs: ["post"],
      nodes: [loop("L", "inc", "inc"), py("inc", { scope: "L" }), py("post")],
      edges: [when("L", "post")],
    });
    const h = harness(
      d,
      {
        conditions: {
          "L->post": () => {
            if (raise) throw new Error("cond");
            return true;
          },
        },
      },
      { policy: "pause" },
    );
    await idle(h.clock);
    expect(h.sink.of("node_awaiting_retry")).toMatchObject([
      { node_id: "L", phase: "conditions", error_class: "condition_failed" },
    ]);
    raise = false;
    expect(h.run.retryNode("L@iter#1")).toEqual({ ok: true });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.fakes.calls.filter((c) => c.id === "inc")).toHaveLength(1);
    expect(h.fakes.calls.filter((c) => c.kind === "until")).toHaveLength(1);
  });

  it("reruns the last iteration on manual retry after loop_no_value, continuing attempt numbers", async () => {
    let pass = false;
    const d = def({
      start: "L",
      outputs: ["L"],
      nodes: [loop("L", "inc", "check"), py("inc", { scope: "L" }), py("check", { scope: "L" })],
      edges: [when("inc", "check", "L")],
    });
    const h = harness(d, { conditions: { "inc->check": () => pass } }, { policy: "pause" });
    await idle(h.clock);
    expect(h.sink.of("node_awaiting_retry")).toMatchObject([
      { node_id: "L", phase: "iteration", error_class: "loop_no_value" },
    ]);
    pass = true;
    expect(h.run.retryNode("L@iter#1").ok).toBe(true);
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    expect(h.sink.of("loop_iteration").map((e) => [e.loop_iteration, e.rerun])).toEqual([
      [1, false],
      [1, true],
    ]);
    expect(
      h.fakes.calls.filter((c) => c.kind === "python").map((c) => `${c.activationId}.${c.attempt}`),
    ).toEqual(["inc@iter#1.1", "inc@iter#1.2", "check@iter#1.1"]);
  });
});
