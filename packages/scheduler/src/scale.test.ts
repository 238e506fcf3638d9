import type { Definition } from "@icode/workflow-graph";
import { describe, expect, it } from "vitest";
import { chainDef, def, edge, harness, py, recordingSink } from "./testing";

const N = 10_000;

function fanOutDef(n: number): Definition {
  const ids = Array.from({ length: n }, (_, i) => `n${i}`);
  return def({
    start: "s",
    outputs: ["j"],
    nodes: [py("s"), ...ids.map((id) => py(id)), py("j")],
    edges: [...ids.map((id) => edge("s", id)), ...ids.map((id) => edge(id, "j"))],
  });
}

describe("scale", () => {
  it(`finishes a ${N}-node chain without recursion problems`, async () => {
    const ids = Array.from({ length: N }, (_, i) => `n${i}`);
    const h = harness(chainDef(ids), {}, { sink: recordingSink({ validate: false }) });
    const result = await h.finish();
    expect(result).toMatchObject({
      outcome: "completed",
      outputs: [{ node_id: `n${N - 1}`, text: `n${N - 1}` }],
    });
    expect(h.fakes.calls).toHaveLength(N);
    expect(h.sink.of("node_completed")).toHaveLength(N);
  });

  it(`finishes a ${N}-way fan-out and fan-in`, async () => {
    const h = harness(fanOutDef(N), {}, { sink: recordingSink({ validate: false }) });
    const result = await h.finish();
    expect(result.outcome).toBe("completed");
    // Every branch was started before the first one completed: they ran in parallel.
    const types = h.sink.events.filter((e) => e.type === "attempt_started" || e.type === "node_completed");
    const firstDone = types.findIndex((e) => e.type === "node_completed" && e.node_id !== "s");
    expect(types.slice(0, firstDone).filter((e) => e.type === "attempt_started")).toHaveLength(N + 1);
    const merged = h.sink.of("node_started").find((e) => e.node_id === "j")!;
    expect(merged.sources).toHaveLength(N);
    expect(merged.input.text.startsWith("## n0\nn0\n\n## n1\nn1")).toBe(true);
  });
});
