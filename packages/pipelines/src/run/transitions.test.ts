import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { node, type RunFixture, runFixture } from "../../test/run-helpers";
import {
  type Command,
  CommandSchema,
  NODE_STATES,
  type NodeState,
  RUN_STATES,
  type RunState,
} from "../store/records";
import { controlPipelineRun, planControl, skipHandoff } from "./control";
import {
  CONTROL_ACTIONS,
  type ControlAction,
  DRIVER_NODE_TRANSITIONS,
  effectText,
  NODE_ACTIONS,
  NODE_TRANSITIONS,
  RUN_TRANSITIONS,
} from "./transitions";

// The transition tables, exhaustively: every action × run state × node state, applied to a real run in a
// real SQLite file through controlPipelineRun (no driver holds the run, so the caller applies it).

const commandFor = (action: ControlAction): Command =>
  action === "skip_node"
    ? { action, node_id: "target", note: "not needed" }
    : action === "approve_node" || action === "retry_node"
      ? { action, node_id: "target" }
      : { action };

let fx: RunFixture;
let definitionId: string;
beforeAll(async () => {
  fx = await runFixture({
    name: "Table",
    nodes: [node("up"), node("target", ["up"], { requires_approval: true }), node("down", ["target"])],
  });
  definitionId = (await fx.store.getRun(fx.runId)).definition_id;
});
afterAll(async () => {
  await fx.cleanup();
});

/** A run whose state is `run` and whose `target` node is `state` (`up` succeeded, `down` pending). */
async function runIn(run: RunState, state: NodeState): Promise<string> {
  const { store } = fx;
  const { run_id } = await store.createRun({
    definition_id: definitionId,
    task_input: "t",
    failure_policy: "continue",
  });
  await store.acquireLease(run_id, "setup", 60_000);
  const started = state === "launching" || state === "running";
  await store.updateRun(run_id, "setup", {
    run: { state: run },
    nodes: {
      up: { state: "succeeded", handoff: { summary: "up" }, attempts: 1 },
      target: {
        state,
        attempts: started || ["blocked", "failed", "succeeded"].includes(state) ? 1 : 0,
        approval_granted: started,
        error: state === "failed" ? { code: "x", message: "boom" } : null,
      },
    },
    ...(started ? { startAttempts: [{ node_id: "target", attempt: 1, prompt: "p" }] } : {}),
  });
  await store.releaseLease(run_id, "setup");
  return run_id;
}

const cases = CONTROL_ACTIONS.flatMap((action) =>
  RUN_STATES.flatMap((run) => NODE_STATES.map((state) => ({ action, run, state }))),
);

describe("the transition tables, every action × run state × node state", () => {
  it("cover every command the store's queue takes", () => {
    const actions = CommandSchema.options.map((o) => o.shape.action.value);
    expect([...CONTROL_ACTIONS].sort()).toEqual([...actions].sort());
  });

  it.each(cases)("$action with the run $run and the node $state", async ({ action, run, state }) => {
    const { store } = fx;
    const runId = await runIn(run, state);
    const stopped: string[] = [];
    const before = await store.getRunNodes(runId);
    const {
      result,
      needsDriver,
      run: after,
      via,
    } = await controlPipelineRun(store, runId, commandFor(action), {
      owner: "cli",
      stopSessions: async (id) => {
        stopped.push(id);
      },
    });
    expect(via).toBe("direct");
    const nodes = Object.fromEntries((await store.getRunNodes(runId)).map((n) => [n.node_id, n]));
    const runEffect = RUN_TRANSITIONS[action][run];
    const nodeEffect = NODE_TRANSITIONS[action][state];
    const isNodeAction = NODE_ACTIONS.includes(action);
    const refused = runEffect === "refused" || (isNodeAction && nodeEffect === "refused");
    const events = (await store.listEvents(runId)).map((e) => e.event);
    if (refused) {
      expect(result).toEqual({
        ok: false,
        code: "pipeline_action_not_allowed",
        message: expect.stringContaining(
          runEffect === "refused" ? `the run is ${run}` : `while it is ${state}`,
        ),
      });
      // The refusal says what would be allowed, read from the same table row.
      const allowed =
        runEffect === "refused"
          ? Object.entries(RUN_TRANSITIONS[action]).filter(([, e]) => e !== "refused")
          : Object.entries(NODE_TRANSITIONS[action]).filter(([, e]) => typeof e === "object");
      const says =
        runEffect === "refused" ? "it is allowed while the run is " : "it is allowed for a node that is ";
      if (!result.ok) {
        const list = result.message.slice(result.message.indexOf(says) + says.length);
        expect(result.message).toContain(says);
        expect(list.split(/, | or /u).sort()).toEqual(allowed.map(([state]) => state).sort());
      }
      expect(after.state).toBe(run);
      expect((await store.getRunNodes(runId)).map((n) => [n.node_id, n.state, n.approval_granted])).toEqual(
        before.map((n) => [n.node_id, n.state, n.approval_granted]),
      );
      expect(events).toEqual([
        expect.objectContaining({ type: "command_refused", code: "pipeline_action_not_allowed" }),
      ]);
      expect(stopped).toEqual([]);
      return;
    }
    expect(result).toEqual({ ok: true });
    expect(after.state).toBe(runEffect === "same" ? run : (runEffect as { to: RunState }).to);
    expect(needsDriver).toBe(after.state === "pending" || after.state === "running");
    expect(events.at(-1)).toMatchObject({ type: "command_applied", command: commandFor(action) });
    const target = nodes.target!;
    if (nodeEffect === "same" || nodeEffect === "refused") expect(target.state).toBe(state);
    else if (nodeEffect === "abort") {
      // No driver runs the attempt: the node is canceled at once and its attempt ended interrupted.
      expect(target.state).toBe("canceled");
      expect((await store.listAttempts(runId, { node_id: "target" }))[0]).toMatchObject({
        status: "interrupted",
        error: { code: "pipeline_driver_lost" },
      });
    } else expect(target.state).toBe(nodeEffect.to);
    if (action === "approve_node") expect(target.approval_granted).toBe(true);
    if (action === "retry_node")
      expect(target).toMatchObject({ approval_granted: false, error: null, handoff: null });
    if (action === "skip_node") expect(target.handoff).toEqual(skipHandoff("not needed"));
    if (action === "stop_sessions") expect(stopped).toEqual([runId]);
    if (action === "cancel") expect(nodes.down!.state).toBe("canceled");
    // Every node_state event names the state the node really left and entered.
    for (const event of events) {
      if (event.type === "node_state" && event.node_id === "target") {
        expect(event.from).toBe(state);
        expect(event.to).toBe(target.state);
      }
    }
  });

  it("refuses a node action naming a node the run does not have", async () => {
    const runId = await runIn("running", "failed");
    const snapshot = { run: await fx.store.getRun(runId), nodes: await fx.store.getRunNodes(runId) };
    expect(planControl({ action: "retry_node", node_id: "nope" }, snapshot)).toMatchObject({
      ok: false,
      code: "pipeline_node_not_found",
    });
  });

  it("skip without a note leaves the summary 'skipped'", async () => {
    const runId = await runIn("paused", "blocked");
    const { result } = await controlPipelineRun(
      fx.store,
      runId,
      { action: "skip_node", node_id: "target", note: null },
      { owner: "cli" },
    );
    expect(result).toEqual({ ok: true });
    const target = (await fx.store.getRunNodes(runId)).find((n) => n.node_id === "target")!;
    expect(target.handoff).toEqual({ summary: "skipped", skipped: true });
  });

  it("stop_sessions without an executor is refused, not ignored", async () => {
    const runId = await runIn("succeeded", "succeeded");
    const { result } = await controlPipelineRun(
      fx.store,
      runId,
      { action: "stop_sessions" },
      { owner: "cli" },
    );
    expect(result).toMatchObject({ ok: false, code: "pipeline_action_not_allowed" });
  });

  it("a retry puts back the canceled nodes below the failure, and only those (continue)", async () => {
    const { store } = fx;
    const { run_id } = await store.createRun({
      definition_id: definitionId,
      task_input: "t",
      failure_policy: "continue",
    });
    await store.acquireLease(run_id, "setup", 60_000);
    await store.updateRun(run_id, "setup", {
      run: { state: "failed" },
      nodes: { up: { state: "failed" }, target: { state: "canceled" }, down: { state: "canceled" } },
    });
    await store.releaseLease(run_id, "setup");
    const { result, needsDriver } = await controlPipelineRun(
      store,
      run_id,
      { action: "retry_node", node_id: "up" },
      { owner: "cli" },
    );
    expect(result).toEqual({ ok: true });
    expect(needsDriver).toBe(true);
    expect((await store.getRunNodes(run_id)).map((n) => n.state)).toEqual(["pending", "pending", "pending"]);
    expect((await store.getRun(run_id)).state).toBe("running");
  });
});

/** The rows of the markdown table after `marker`, as header → cells. */
function parseTable(doc: string, marker: string): { header: string[]; rows: string[][] } {
  const start = doc.indexOf(marker);
  expect(start).toBeGreaterThan(0);
  const lines = doc
    .slice(start + marker.length)
    .trimStart()
    .split("\n");
  const table: string[][] = [];
  for (const line of lines) {
    if (!line.startsWith("|")) break;
    table.push(
      line
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
  }
  return { header: table[0]!, rows: table.slice(2) };
}

describe("docs/pipelines.md's Run control tables are the code's", () => {
  const unquote = (cell: string) => cell.replace(/^`|`$/g, "");
  it("action × run state", async () => {
    const doc = await readFile(new URL("../../../../docs/pipelines.md", import.meta.url), "utf8");
    const { header, rows } = parseTable(doc, "<!-- run-control:run-states -->");
    expect(header.slice(1).map(unquote)).toEqual([...RUN_STATES]);
    expect(rows.map((r) => unquote(r[0]!))).toEqual([...CONTROL_ACTIONS]);
    for (const row of rows) {
      const action = unquote(row[0]!) as ControlAction;
      expect(row.slice(1)).toEqual(RUN_STATES.map((s) => effectText(RUN_TRANSITIONS[action][s])));
    }
  });
  it("action × node state", async () => {
    const doc = await readFile(new URL("../../../../docs/pipelines.md", import.meta.url), "utf8");
    const { header, rows } = parseTable(doc, "<!-- run-control:node-states -->");
    expect(header.slice(1).map(unquote)).toEqual([...CONTROL_ACTIONS]);
    expect(rows.map((r) => unquote(r[0]!))).toEqual([...NODE_STATES]);
    for (const row of rows) {
      const state = unquote(row[0]!) as NodeState;
      expect(row.slice(1)).toEqual(CONTROL_ACTIONS.map((a) => effectText(NODE_TRANSITIONS[a][state])));
    }
  });
  it("the driver's own node transitions", async () => {
    const doc = await readFile(new URL("../../../../docs/pipelines.md", import.meta.url), "utf8");
    const { rows } = parseTable(
      doc,
      "The driver's own transitions, the only ones it writes besides the table's:",
    );
    const pairs = new Set<string>();
    for (const [from, to] of rows) {
      for (const f of from!.split(" / "))
        for (const t of to!.split(" / ")) pairs.add(`${unquote(f)}→${unquote(t)}`);
    }
    expect([...pairs].sort()).toEqual(
      [...new Set(DRIVER_NODE_TRANSITIONS.map((t) => `${t.from}→${t.to}`))].sort(),
    );
  });
});
