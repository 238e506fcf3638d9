// Mastra workflows on the benchmark shapes, as its documentation shows: createStep with zod input and
// output schemas, createWorkflow(...).then(...) for a chain, .parallel([...]) then a step reading every
// branch's output for the fan-out, .dowhile(nestedWorkflow, condition) for a loop of a two-step body;
// commit(), then createRunAsync() and run.start({ inputData }). Usage: node peer-mastra.mjs '<job json>'.
import { createStep, createWorkflow, z } from "../peers/mastra.mjs";
import { bigValue, checkBigValue, checkFanout, sample } from "./peer-shapes.mjs";

const text = z.object({ value: z.string() });
const big = z.object({ text: z.string(), data: z.array(z.string()) });

const echoStep = (id, schema = text) =>
  createStep({ id, inputSchema: schema, outputSchema: schema, execute: async ({ inputData }) => inputData });

function chain(n) {
  let workflow = createWorkflow({ id: `chain-${n}`, inputSchema: text, outputSchema: text });
  for (let i = 0; i < n; i++) workflow = workflow.then(echoStep(`n${i}`));
  return workflow.commit();
}

function valueChain(n) {
  const make = createStep({
    id: "n0",
    inputSchema: text,
    outputSchema: big,
    execute: async () => bigValue(),
  });
  let workflow = createWorkflow({ id: `value-${n}`, inputSchema: text, outputSchema: big }).then(make);
  for (let i = 1; i < n; i++) workflow = workflow.then(echoStep(`n${i}`, big));
  return workflow.commit();
}

function fanout(n) {
  const ids = Array.from({ length: n }, (_, i) => `b${i}`);
  const sink = createStep({
    id: "sink",
    inputSchema: z.object(Object.fromEntries(ids.map((id) => [id, text]))),
    outputSchema: text,
    execute: async ({ inputData }) => ({
      value: ids.map((id) => `## ${id}\n${inputData[id].value}`).join("\n\n"),
    }),
  });
  return createWorkflow({ id: `fanout-${n}`, inputSchema: text, outputSchema: text })
    .then(echoStep("src"))
    .parallel(ids.map((id) => echoStep(id)))
    .then(sink)
    .commit();
}

/** Body iterations executed by the current loop run, so the count can be checked. */
let iterations = 0;

function loop(n) {
  const first = createStep({
    id: "a",
    inputSchema: text,
    outputSchema: text,
    execute: async ({ inputData }) => {
      iterations++;
      return inputData;
    },
  });
  const body = createWorkflow({ id: "body", inputSchema: text, outputSchema: text })
    .then(first)
    .then(echoStep("b"))
    .commit();
  return createWorkflow({ id: `loop-${n}`, inputSchema: text, outputSchema: text })
    .dowhile(body, async ({ iterationCount }) => iterationCount < n)
    .commit();
}

async function start(workflow) {
  const run = await workflow.createRunAsync();
  const result = await run.start({ inputData: { value: "x" } });
  if (result.status !== "success") {
    throw new Error(`run ended with status ${result.status}: ${result.error?.message ?? ""}`);
  }
  return result.result;
}

async function once({ shape, n }) {
  const t0 = performance.now();
  if (shape === "chain" || shape === "loop") {
    const workflow = shape === "chain" ? chain(n) : loop(n);
    const buildMs = performance.now() - t0;
    iterations = 0;
    const out = await start(workflow);
    if (out.value !== "x") throw new Error(`${shape} returned ${JSON.stringify(out)}`);
    if (shape === "loop" && iterations !== n)
      throw new Error(`loop ran ${iterations} iterations, expected ${n}`);
    return { buildMs };
  }
  if (shape === "fanout") {
    const workflow = fanout(n);
    const buildMs = performance.now() - t0;
    checkFanout((await start(workflow)).value, n);
    return { buildMs };
  }
  if (shape === "value") {
    const workflow = valueChain(n);
    const buildMs = performance.now() - t0;
    checkBigValue(await start(workflow));
    return { buildMs };
  }
  if (shape === "concurrent") {
    const workflow = fanout(n);
    const buildMs = performance.now() - t0;
    const outs = await Promise.all(Array.from({ length: 8 }, () => start(workflow)));
    for (const out of outs) checkFanout(out.value, n);
    return { buildMs };
  }
  throw new Error(`unknown shape ${shape}`);
}

await sample(JSON.parse(process.argv[2]), once);
