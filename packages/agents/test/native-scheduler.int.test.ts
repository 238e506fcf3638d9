/*
 * The native runner as the real scheduler's `runAgent` executor, on a wall clock: the node's `timeout`
 * aborts an attempt that hangs on the provider, the scheduler retries the node with `continueFrom`, and the
 * new attempt continues the conversation (the finished tool call does not run again). Events are checked
 * against the scheduler's own schemas by its recording sink.
 */
import {
  hang,
  type ProviderDouble,
  startProviderDouble,
  text,
  toolCalls,
  toolResults,
} from "@icode/model-provider-double";
import { type Clock, startRun } from "@icode/workflow-scheduler";
import { agent, def, recordingSink } from "@icode/workflow-scheduler/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { NativeAttemptContext } from "../src/attempt";
import { createNativeRunner } from "../src/native/runner";
import type { AgentTranscript } from "../src/transcript";
import { modelYaml, noteTool, noWait, profileYaml, setup, toolsetOf } from "./native-harness";

let provider: ProviderDouble;
beforeAll(async () => {
  provider = await startProviderDouble();
});
afterAll(() => provider.close());

const wallClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, callback) {
    const t = setTimeout(callback, delayMs);
    return { cancel: () => clearTimeout(t) };
  },
};

it.each(["openai", "anthropic"] as const)(
  "%s: a timed-out attempt is retried by the scheduler and continues its conversation",
  async (wire) => {
    const route = `sched-${wire}`;
    const s = await setup({
      models: { m: modelYaml(provider, wire, route, { stream: true }) },
      agents: { Tester: profileYaml("Tester") },
    });
    const note = noteTool();
    const runner = createNativeRunner({ buildToolset: toolsetOf([note.tool]).build, sleep: noWait });
    provider.script(route, [
      toolCalls([{ name: "write_note", arguments: { note: "once" } }]),
      hang({ sendHeaders: true }),
      text("All done."),
    ]);
    const transcripts: AgentTranscript[] = [];
    const sink = recordingSink();
    const node = { ...agent("review", { timeout: 1 }), profile: "Tester" };
    const run = startRun({
      runId: "0123456789abcdef0123456789abcdef",
      definition: def({ start: "review", outputs: ["review"], nodes: [node] }),
      input: { text: "Review it.", data: null },
      clock: wallClock,
      sink,
      executors: {
        runAgent: (request, io) => {
          const context: NativeAttemptContext = {
            request,
            io,
            profile: s.config.profiles.find((p) => p.name === "Tester")!,
            config: s.config,
            model: s.config.models.find((m) => m.id === "m")!,
            workspace: s.workspace,
            env: {},
            chrysHome: s.home,
            homeDir: s.home,
            approvalMode: "bypass",
            transcript: (t) => transcripts.push(t),
          };
          return runner.run(context);
        },
      },
    });
    const result = await run.result;
    expect(result).toMatchObject({
      outcome: "completed",
      outputs: [{ node_id: "review", text: "All done." }],
    });
    expect(sink.of("attempt_failed")).toMatchObject([
      { attempt: 1, error: { class: "timeout", retryable: true }, will_retry: true },
    ]);
    expect(note.runs).toEqual([{ note: "once" }]);
    const requests = provider.requestsFor(route);
    expect(requests).toHaveLength(3);
    expect(toolResults(requests[2]!)).toEqual([expect.objectContaining({ content: 'wrote "once"' })]);
    expect(transcripts.map((t) => [t.attempt, t.continued_from, t.outcome])).toEqual([
      [1, null, "agent_aborted"],
      [2, 1, "completed"],
    ]);
    const activities = sink.of("agent_activity");
    expect(activities.length).toBeGreaterThan(0);
    await runner.close();
  },
);
