import { describe, expect, it } from "vitest";
import { type AcpDoubleScriptInput, AcpDoubleScriptSchema, StepSchema, selectTurn, stepKind } from "./script";

const parse = (input: AcpDoubleScriptInput) => AcpDoubleScriptSchema.parse(input);
const issues = (input: unknown) => {
  const result = AcpDoubleScriptSchema.safeParse(input);
  return result.success
    ? []
    : result.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
};

describe("AcpDoubleScriptSchema", () => {
  it("fills the defaults of the fast-path script", () => {
    expect(parse({ turns: [{ steps: [{ message: "ok" }] }] })).toEqual({
      agentInfo: { name: "acp-agent-double", version: "0.1.0" },
      handshakeDelayMs: 0,
      loadSession: "known",
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      configOptions: [],
      turns: [{ steps: [{ message: "ok" }] }],
    });
  });

  it("needs a turn or a default turn", () => {
    expect(issues({})).toEqual([
      { path: "turns", message: "a script needs at least one turn or a defaultTurn" },
    ]);
    expect(issues({ defaultTurn: { steps: [] } })).toEqual([]);
  });

  it("takes exactly one kind per step", () => {
    expect(issues({ turns: [{ steps: [{ message: "a", thought: "b" }] }] })).toEqual([
      {
        path: "turns.0.steps.0",
        message: "a step has exactly one kind, found message and thought; split it into 2 steps",
      },
    ]);
    expect(issues({ turns: [{ steps: [{}] }] })[0]?.message).toMatch(
      /^a step needs one of the keys message, /,
    );
    expect(issues({ turns: [{ steps: [{ mesage: "typo" }] }] })[0]?.path).toBe("turns.0.steps.0");
  });

  it("allows a branch only on the step kinds that have it, checked in nested branches too", () => {
    expect(issues({ turns: [{ steps: [{ message: "a", onOk: [] }] }] })).toEqual([
      { path: "turns.0.steps.0.onOk", message: "a message step has no onOk branch" },
    ]);
    expect(
      issues({
        turns: [{ steps: [{ permission: {}, onAllowed: [{ submitHandoff: {}, onRejected: [] }] }] }],
      }),
    ).toEqual([
      {
        path: "turns.0.steps.0.onAllowed.0.onRejected",
        message: "a submitHandoff step has no onRejected branch; it has onOk, onError",
      },
    ]);
  });

  it("checks modes, models and config options against their own lists", () => {
    expect(
      issues({
        turns: [{ steps: [] }],
        modes: { current: "yolo", available: [{ id: "ask", name: "Ask" }] },
        models: { via: "config_option", available: ["a"], current: "b" },
        configOptions: [
          { id: "model", name: "M", currentValue: "x", options: [{ value: "x", name: "X" }] },
          { id: "effort", name: "E", currentValue: "max", options: [{ value: "low", name: "Low" }] },
        ],
      }),
    ).toEqual([
      { path: "modes.current", message: "mode yolo is not available" },
      { path: "models.current", message: "model b is not available" },
      {
        path: "configOptions.0.id",
        message: 'config option model is given twice (models via config_option adds "model")',
      },
      { path: "configOptions.1.currentValue", message: "max is not one of the option's values" },
    ]);
  });

  it("fills step defaults: tool call kind and status, permission options, usage size and currency", () => {
    const step = (input: unknown) => StepSchema.parse(input);
    expect(step({ toolCall: { title: "t" } }).toolCall).toEqual({
      title: "t",
      kind: "other",
      status: "pending",
      updates: [],
    });
    expect(step({ permission: {} }).permission?.options.map((o) => o.kind)).toEqual([
      "allow_once",
      "reject_once",
    ]);
    expect(step({ usage: { inputTokens: 1, outputTokens: 2, cost: { amount: 1 } } }).usage).toMatchObject({
      size: 200_000,
      cost: { amount: 1, currency: "USD" },
    });
    expect(stepKind(step({ finalJson: null }))).toBe("finalJson");
    expect(stepKind(step({ hang: { ignoreCancel: true } }))).toBe("hang");
  });
});

describe("selectTurn", () => {
  const script = parse({
    turns: [
      { steps: [{ message: "first" }] },
      { when: { promptIncludes: "review" }, steps: [{ message: "review" }] },
      { steps: [{ message: "second" }] },
      { when: { turn: 5 }, steps: [{ message: "sixth" }] },
    ],
  });
  const pick = (index: number, ordered: number, text: string) => {
    const picked = selectTurn(script, index, ordered, text);
    return picked && { message: picked.turn.steps[0]?.message, ordered: picked.ordered };
  };

  it("takes ordered turns in order, then repeats the last one", () => {
    expect(pick(0, 0, "x")).toEqual({ message: "first", ordered: true });
    expect(pick(1, 1, "x")).toEqual({ message: "second", ordered: true });
    expect(pick(2, 2, "x")).toEqual({ message: "second", ordered: false });
  });

  it("prefers a turn whose when matches, without using up an ordered turn", () => {
    expect(pick(0, 0, "please review this")).toEqual({ message: "review", ordered: false });
    expect(pick(5, 1, "x")).toEqual({ message: "sixth", ordered: false });
  });

  it("falls back to the default turn past the ordered turns, and finds none without either", () => {
    const withDefault = parse({
      turns: [{ steps: [{ message: "one" }] }],
      defaultTurn: { steps: [{ message: "d" }] },
    });
    expect(selectTurn(withDefault, 1, 1, "x")?.turn.steps).toEqual([{ message: "d" }]);
    const onlyWhen = parse({ turns: [{ when: { promptIncludes: "a" }, steps: [] }] });
    expect(selectTurn(onlyWhen, 0, 0, "b")).toBeUndefined();
  });
});
