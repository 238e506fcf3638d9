import { describe, expect, it } from "vitest";
import {
  ConfigOptionSchema,
  NewSessionAnswerSchema,
  parseAnswer,
  selectValues,
  selfServeAuthMethod,
} from "./wire";

describe("the answers the adapter reads", () => {
  it("flattens grouped select values", () => {
    const option = ConfigOptionSchema.parse({
      id: "model",
      type: "select",
      currentValue: "a",
      options: [{ value: "a" }, { group: "g", options: [{ value: "b" }, { value: "c" }] }],
    });
    expect(selectValues(option)).toEqual(["a", "b", "c"]);
  });

  it("keeps the legacy models of a session/new answer", () => {
    const parsed = NewSessionAnswerSchema.parse({
      sessionId: "s1",
      models: { currentModelId: "m1", availableModels: [{ modelId: "m1", name: "M1" }] },
    });
    expect(parsed.models?.availableModels.map((m) => m.modelId)).toEqual(["m1"]);
  });

  it("says where an answer is malformed", () => {
    expect(parseAnswer(NewSessionAnswerSchema, "session/new", { sessionId: 3 })).toEqual({
      ok: false,
      message: expect.stringContaining("the agent's answer to session/new is malformed at sessionId"),
    });
  });

  it("authenticates by itself only with agent-type methods", () => {
    expect(selfServeAuthMethod([{ id: "t", type: "terminal" }, { id: "a" }])).toEqual({ id: "a" });
    expect(
      selfServeAuthMethod([
        { id: "t", type: "terminal" },
        { id: "e", type: "env_var" },
      ]),
    ).toBeNull();
    expect(selfServeAuthMethod([{ id: "x", type: "agent" }])).toEqual({ id: "x", type: "agent" });
    expect(selfServeAuthMethod([])).toBeNull();
  });
});
