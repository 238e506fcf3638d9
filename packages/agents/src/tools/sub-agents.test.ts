import type { AgentProfile } from "@icode/agent-profiles";
import { waitUntil } from "@icode/test-utils";
import { describe, expect, it } from "vitest";
import { callContext, loadProfile, toolsetOptions, workspace } from "../../test/tools/support";
import type { SubAgentRunner, ToolOutcome } from "../tool";
import { buildToolset } from "./build-toolset";
import { Semaphore } from "./semaphore";

const BOSS = `name: Boss
sub_agents:
  max_total_concurrency: 2
  agents:
    - profile: Explore
      tool_name: explore
      max_concurrency: 1
    - profile: General
      tool_name: general
      tool_description: Implements a self-contained change
    - profile: Nobody
`;

/** A sub-agent runner whose calls stay open until the test lets each one finish. */
function gatedRunner() {
  const active = new Map<string, number>();
  const peak = new Map<string, number>();
  let total = 0;
  let peakTotal = 0;
  const started: string[] = [];
  const gates: (() => void)[] = [];
  const runner: SubAgentRunner = async (profile: AgentProfile, task, signal) => {
    started.push(`${profile.name}:${task}`);
    active.set(profile.name, (active.get(profile.name) ?? 0) + 1);
    peak.set(profile.name, Math.max(peak.get(profile.name) ?? 0, active.get(profile.name) ?? 0));
    total++;
    peakTotal = Math.max(peakTotal, total);
    await new Promise<void>((resolve) => {
      gates.push(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    active.set(profile.name, (active.get(profile.name) ?? 1) - 1);
    total--;
    return { ok: true, output: `${profile.name} did ${task}` };
  };
  return { runner, started, gates, peak, peakTotal: () => peakTotal, total: () => total };
}

describe("sub-agent tools", () => {
  it("offers one tool per loaded entry, with its description, and warns about an unknown profile", async () => {
    const ws = workspace();
    const toolset = await buildToolset(toolsetOptions(ws, await loadProfile(ws, BOSS)));
    expect(toolset.tools.map((t) => [t.name, t.kind, t.activityKind])).toEqual([
      ["explore", "sub_agent", "sub_agent"],
      ["general", "sub_agent", "sub_agent"],
    ]);
    expect(toolset.tools[1]?.description).toBe("Implements a self-contained change");
    expect(toolset.tools[0]?.description).not.toBe("");
    expect(toolset.warnings).toEqual([
      { code: "sub_agent_skipped", message: expect.stringContaining('sub-agent "Nobody" of profile "Boss"') },
    ]);
    await toolset.close();
  });

  it("runs at most max_concurrency calls of one tool and max_total_concurrency across tools; the rest wait", async () => {
    const ws = workspace();
    const gated = gatedRunner();
    const toolset = await buildToolset(
      toolsetOptions(ws, await loadProfile(ws, BOSS), { runSubAgent: gated.runner }),
    );
    const [explore, general] = toolset.tools;
    const calls: Promise<ToolOutcome>[] = [
      explore!.execute({ task: "e1" }, callContext(ws)),
      explore!.execute({ task: "e2" }, callContext(ws)),
      general!.execute({ task: "g1" }, callContext(ws)),
      general!.execute({ task: "g2" }, callContext(ws)),
      general!.execute({ task: "g3" }, callContext(ws)),
    ];
    expect(await waitUntil(() => gated.started.length === 2, 10_000)).toBe(true);
    expect(gated.started).toEqual(["Explore:e1", "General:g1"]);
    while (gated.started.length < 5 || gated.total() > 0) {
      const before = gated.started.length;
      gated.gates.shift()?.();
      await waitUntil(
        () => gated.started.length > before || gated.gates.length > 0 || gated.total() === 0,
        10_000,
      );
      expect(gated.total()).toBeLessThanOrEqual(2);
    }
    const outcomes = await Promise.all(calls);
    expect(outcomes.map((o) => o.ok && o.output).sort()).toEqual([
      "Explore did e1",
      "Explore did e2",
      "General did g1",
      "General did g2",
      "General did g3",
    ]);
    expect(gated.peak.get("Explore")).toBe(1);
    expect(gated.peakTotal()).toBe(2);
    await toolset.close();
  });

  it("ends a call that is cancelled while it waits for a slot, without running it", async () => {
    const ws = workspace();
    const gated = gatedRunner();
    const toolset = await buildToolset(
      toolsetOptions(ws, await loadProfile(ws, BOSS), { runSubAgent: gated.runner }),
    );
    const explore = toolset.tools[0]!;
    const first = explore.execute({ task: "first" }, callContext(ws));
    expect(await waitUntil(() => gated.started.length === 1, 10_000)).toBe(true);
    const controller = new AbortController();
    const waiting = explore.execute({ task: "second" }, callContext(ws, controller.signal));
    controller.abort();
    expect(await waiting).toEqual({ ok: false, error: expect.stringContaining("cancelled while waiting") });
    gated.gates.shift()?.();
    expect(await first).toEqual({ ok: true, output: "Explore did first" });
    expect(gated.started).toEqual(["Explore:first"]);
  });

  it("fails every call when a concurrency is 0, and returns a failed sub-agent's error to the model", async () => {
    const ws = workspace();
    const zero = await loadProfile(
      ws,
      "name: Zero\nsub_agents:\n  agents:\n    - profile: Explore\n      max_concurrency: 0\n    - profile: General\n",
    );
    let ran = 0;
    const toolset = await buildToolset(
      toolsetOptions(ws, zero, {
        runSubAgent: async () => {
          ran++;
          return { ok: false, error: "the sub-agent's model is unreachable" };
        },
      }),
    );
    const [explore, general] = toolset.tools;
    expect(explore?.name).toBe("Explore");
    expect(await explore!.execute({ task: "x" }, callContext(ws))).toEqual({
      ok: false,
      error: expect.stringContaining("max_concurrency of sub-agent Explore is 0"),
    });
    expect(ran).toBe(0);
    expect(await general!.execute({ task: "x" }, callContext(ws))).toEqual({
      ok: false,
      error: "the sub-agent's model is unreachable",
    });
    expect(ran).toBe(1);
  });
});

describe("Semaphore", () => {
  it("grants in order up to its limit and lets a waiter give up", async () => {
    const s = new Semaphore(1);
    const never = new AbortController().signal;
    const release = await s.acquire(never);
    const order: string[] = [];
    const controller = new AbortController();
    const gaveUp = s.acquire(controller.signal).then(
      () => order.push("gave-up granted"),
      () => order.push("gave up"),
    );
    const next = s.acquire(never).then((r) => {
      order.push("next");
      return r;
    });
    controller.abort();
    await gaveUp;
    release();
    release(); // a second call does nothing
    (await next)();
    expect(order).toEqual(["gave up", "next"]);
    expect(s.inUse).toBe(0);
  });
});
