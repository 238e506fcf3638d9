import type { AcpDoubleScriptInput, AgentLogEntry } from "@icode/acp-agent-double";
import { describe, expect, it } from "vitest";
import { createAcpAttempt } from "../src/acp/run-attempt";
import { attemptContext, doubleSetup, failureOf } from "./support/acp";

const run = createAcpAttempt({ graceMs: 500 });
const ECHO = [{ steps: [{ echoSession: true as const }] }];

function requested(entries: readonly AgentLogEntry[], method: string) {
  return entries.filter((e) => e.event === "request" && e.method === method);
}

async function session(
  script: AcpDoubleScriptInput,
  acp: Record<string, unknown> = {},
  modelId: string | null = null,
) {
  const setup = doubleSetup(script, acp);
  const { context, io } = await attemptContext({ ...setup, modelId });
  const result = await run(context);
  return {
    result,
    io,
    entries: setup.entries(),
    state: result.status === "completed" ? JSON.parse(result.value.text) : null,
  };
}

describe("the model switch of an ACP attempt", () => {
  it("goes through a category model config option", async () => {
    const { state, io, entries } = await session(
      { models: { via: "config_option", available: ["fast", "smart"] }, turns: ECHO },
      {},
      "smart",
    );
    expect(state).toMatchObject({ modelId: "smart" });
    expect(requested(entries, "session/set_config_option")).toMatchObject([
      { configId: "model", value: "smart" },
    ]);
    expect(io.of("warning")).toEqual([]);
  });

  it("goes through the legacy session/set_model when the agent lists models that way", async () => {
    const { state, entries } = await session(
      { models: { via: "set_model", available: ["fast", "smart"] }, turns: ECHO },
      {},
      "smart",
    );
    expect(state).toMatchObject({ modelId: "smart" });
    expect(requested(entries, "session/set_model")).toMatchObject([{ modelId: "smart" }]);
  });

  it("asks nothing when no model is requested", async () => {
    const { state, entries } = await session({
      models: { via: "config_option", available: ["fast", "smart"] },
      turns: ECHO,
    });
    expect(state).toMatchObject({ modelId: "fast" });
    expect(requested(entries, "session/set_config_option")).toEqual([]);
  });

  it("continues on the agent's default with a warning when the model is not listed", async () => {
    const { state, io, entries } = await session(
      { models: { via: "config_option", available: ["fast", "smart"] }, turns: ECHO },
      {},
      "huge",
    );
    expect(state).toMatchObject({ modelId: "fast" });
    expect(io.of("warning")).toMatchObject([{ code: "acp_model_not_listed" }]);
    expect(io.of("warning")[0]?.message).toContain("fast, smart");
    expect(requested(entries, "session/set_config_option")).toEqual([]);
  });

  it("continues with a warning when the agent rejects the switch (invalid params), even without best effort", async () => {
    const { state, io } = await session(
      { models: { via: "set_model", available: ["fast", "smart"], rejectSetModel: true }, turns: ECHO },
      { best_effort_options: false },
      "smart",
    );
    expect(state).toMatchObject({ modelId: "fast" });
    expect(io.of("warning")).toMatchObject([{ code: "acp_model_switch_rejected" }]);
  });

  it("continues with a warning when the agent has no way to switch models", async () => {
    const { state, io, entries } = await session(
      { models: { via: "none", available: ["fast"] }, turns: ECHO },
      {},
      "smart",
    );
    expect(state).toMatchObject({ modelId: "fast" });
    expect(requested(entries, "session/set_model")).toHaveLength(1);
    expect(io.of("warning")).toMatchObject([{ code: "acp_model_switch_unsupported" }]);
  });
});

describe("the session mode and config options of an ACP attempt", () => {
  const MODES = {
    available: [
      { id: "ask", name: "Ask" },
      { id: "code", name: "Code" },
      { id: "yolo", name: "Yolo" },
    ],
    reject: ["yolo"],
  };
  const OPTIONS = [
    {
      id: "effort",
      name: "Effort",
      currentValue: "low",
      options: [
        { value: "low", name: "Low" },
        { value: "high", name: "High" },
      ],
    },
    {
      id: "locked",
      name: "Locked",
      currentValue: "a",
      options: [
        { value: "a", name: "A" },
        { value: "b", name: "B" },
      ],
      reject: true,
    },
  ];

  it("sets the mode and the options the profile asks for", async () => {
    const { state, entries } = await session(
      { modes: MODES, configOptions: OPTIONS, turns: ECHO },
      { session_mode: "code", config_options: { effort: "high" } },
    );
    expect(state).toMatchObject({ modeId: "code", config: { effort: "high", locked: "a" } });
    expect(requested(entries, "session/set_mode")).toMatchObject([{ modeId: "code" }]);
  });

  it("fails the start with acp_config_rejected when a mode is refused and best effort is off", async () => {
    const { result, entries } = await session({ modes: MODES, turns: ECHO }, { session_mode: "yolo" });
    expect(failureOf(result)).toMatchObject({ class: "acp_config_rejected", retryable: false });
    expect(failureOf(result).message).toContain('session mode "yolo"');
    expect(requested(entries, "session/prompt")).toEqual([]);
  });

  it("skips a refused mode with a warning under best_effort_options", async () => {
    const { state, io } = await session(
      { modes: MODES, turns: ECHO },
      { session_mode: "yolo", best_effort_options: true },
    );
    expect(state).toMatchObject({ modeId: "ask" });
    expect(io.of("warning")).toMatchObject([{ code: "acp_mode_skipped" }]);
  });

  it("rejects a mode the agent does not offer", async () => {
    const { result } = await session({ modes: MODES, turns: ECHO }, { session_mode: "plan" });
    expect(failureOf(result)).toMatchObject({ class: "acp_config_rejected" });
    expect(failureOf(result).message).toContain("modes: ask, code, yolo");
  });

  it("rejects a refused option, an unknown option and an unknown value, or skips them with best effort", async () => {
    for (const config_options of [{ locked: "b" }, { nope: "x" }, { effort: "max" }]) {
      const strict = await session({ configOptions: OPTIONS, turns: ECHO }, { config_options });
      expect(failureOf(strict.result)).toMatchObject({ class: "acp_config_rejected", retryable: false });
      const lenient = await session(
        { configOptions: OPTIONS, turns: ECHO },
        { config_options, best_effort_options: true },
      );
      expect(lenient.result.status).toBe("completed");
      expect(lenient.io.of("warning")).toMatchObject([{ code: "acp_option_skipped" }]);
    }
  });
});
