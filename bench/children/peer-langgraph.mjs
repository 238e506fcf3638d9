// LangGraph JS on the benchmark shapes: a StateGraph of trivial nodes, compiled and invoked as its
// documentation shows (Annotation.Root state, addNode/addEdge, compile(), invoke() with a recursionLimit large
// enough for the graph). Fan-out writes to a list channel with a concat reducer; the loop is a conditional
// edge back to the body's first node. Usage: node peer-langgraph.mjs '<job json>'.
import { Annotation, END, START, StateGraph } from "../peers/langgraph.mjs";
import { bigValue, checkBigValue, checkFanout, sample } from "./peer-shapes.mjs";

const echo = ({ value }) => ({ value });

function chain(n, first = echo) {
  const State = Annotation.Root({ value: Annotation() });
  const graph = new StateGraph(State);
  for (let i = 0; i < n; i++) graph.addNode(`n${i}`, i === 0 ? first : echo);
  graph.addEdge(START, "n0");
  for (let i = 1; i < n; i++) graph.addEdge(`n${i - 1}`, `n${i}`);
  graph.addEdge(`n${n - 1}`, END);
  return graph.compile();
}

function fanout(n) {
  const State = Annotation.Root({
    value: Annotation(),
    items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  });
  const graph = new StateGraph(State).addNode("src", echo);
  for (let i = 0; i < n; i++) graph.addNode(`b${i}`, ({ value }) => ({ items: [`## b${i}\n${value}`] }));
  graph.addNode("sink", ({ items }) => ({ value: items.join("\n\n") }));
  graph.addEdge(START, "src");
  for (let i = 0; i < n; i++) {
    graph.addEdge("src", `b${i}`);
    graph.addEdge(`b${i}`, "sink");
  }
  graph.addEdge("sink", END);
  return graph.compile();
}

function loop(n) {
  const State = Annotation.Root({ value: Annotation(), i: Annotation() });
  return new StateGraph(State)
    .addNode("a", echo)
    .addNode("b", ({ value, i }) => ({ value, i: i + 1 }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addConditionalEdges("b", ({ i }) => (i < n ? "a" : END))
    .compile();
}

async function once({ shape, n }) {
  const t0 = performance.now();
  if (shape === "chain") {
    const app = chain(n);
    const buildMs = performance.now() - t0;
    const out = await app.invoke({ value: "x" }, { recursionLimit: n + 10 });
    if (out.value !== "x") throw new Error(`chain returned ${JSON.stringify(out.value)}`);
    return { buildMs };
  }
  if (shape === "fanout") {
    const app = fanout(n);
    const buildMs = performance.now() - t0;
    const out = await app.invoke({ value: "x" }, { recursionLimit: 10 });
    checkFanout(out.value, n);
    return { buildMs };
  }
  if (shape === "loop") {
    const app = loop(n);
    const buildMs = performance.now() - t0;
    const out = await app.invoke({ value: "x", i: 0 }, { recursionLimit: 2 * n + 10 });
    if (out.i !== n || out.value !== "x")
      throw new Error(`loop ended after ${out.i} iterations, expected ${n}`);
    return { buildMs };
  }
  if (shape === "value") {
    const app = chain(n, () => ({ value: bigValue() }));
    const buildMs = performance.now() - t0;
    const out = await app.invoke({ value: "x" }, { recursionLimit: n + 10 });
    checkBigValue(out.value);
    return { buildMs };
  }
  if (shape === "concurrent") {
    const app = fanout(n);
    const buildMs = performance.now() - t0;
    const outs = await Promise.all(
      Array.from({ length: 8 }, () => app.invoke({ value: "x" }, { recursionLimit: 10 })),
    );
    for (const out of outs) checkFanout(out.value, n);
    return { buildMs };
  }
  throw new Error(`unknown shape ${shape}`);
}

await sample(JSON.parse(process.argv[2]), once);
