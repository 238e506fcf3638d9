import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { type AgentRequest, configureSession, modelSwitchOutcome } from "./configure";
import { NewSessionAnswerSchema } from "./wire";

// The scripted ACP agent double answers every refused switch with invalid-params; these cases need an agent
// that fails differently, so a request function stands in for the agent here (the double covers the rest).

function agentAnswering(answers: Record<string, unknown>): { request: AgentRequest; sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    request: async (method) => {
      sent.push(method);
      const answer = answers[method];
      if (answer instanceof Error) throw answer;
      return answer ?? {};
    },
  };
}

const rpc = (code: number, message: string) => Object.assign(new Error(message), { code });
const MODEL_OPTION = {
  sessionId: "s",
  configOptions: [
    {
      id: "model",
      category: "model",
      type: "select",
      currentValue: "a",
      options: [{ value: "a" }, { value: "b" }],
    },
  ],
};

describe("modelSwitchOutcome", () => {
  it.each([
    [-32601, false, { continue: true, warning: "acp_model_switch_unsupported" }],
    [-32602, false, { continue: true, warning: "acp_model_switch_rejected" }],
    [-32603, false, { continue: false }],
    [-32000, false, { continue: false }],
    [-32603, true, { continue: true, warning: "acp_model_switch_rejected" }],
  ])("JSON-RPC %s with best effort %s", (code, bestEffort, outcome) => {
    expect(modelSwitchOutcome(code, bestEffort)).toEqual(outcome);
  });
});

describe("configureSession's model switch", () => {
  const acp = { session_mode: "", config_options: {}, best_effort_options: false };

  it("fails the start on any other error than unsupported or invalid parameters", async () => {
    const agent = agentAnswering({ "session/set_config_option": rpc(-32603, "model service down") });
    const warnings: string[] = [];
    const run = configureSession({
      request: agent.request,
      sessionId: "s",
      session: NewSessionAnswerSchema.parse(MODEL_OPTION),
      acp,
      modelId: "b",
      warn: (code) => warnings.push(code),
    });
    const error = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isWorkflowError(error) && error.code).toBe("acp_start_failed");
    expect(String((error as Error).message)).toContain("model service down (JSON-RPC -32603)");
    expect(warnings).toEqual([]);
  });

  it("goes on with a warning for the same error under best_effort_options", async () => {
    const agent = agentAnswering({ "session/set_config_option": rpc(-32603, "model service down") });
    const warnings: string[] = [];
    await configureSession({
      request: agent.request,
      sessionId: "s",
      session: NewSessionAnswerSchema.parse(MODEL_OPTION),
      acp: { ...acp, best_effort_options: true },
      modelId: "b",
      warn: (code) => warnings.push(code),
    });
    expect(warnings).toEqual(["acp_model_switch_rejected"]);
  });

  it("lets a lost connection through as thrown, for the caller to retry the connection", async () => {
    const lost = new Error("ACP connection closed");
    const agent = agentAnswering({ "session/set_config_option": lost });
    await expect(
      configureSession({
        request: agent.request,
        sessionId: "s",
        session: NewSessionAnswerSchema.parse(MODEL_OPTION),
        acp,
        modelId: "b",
        warn: () => {},
      }),
    ).rejects.toBe(lost);
  });

  it("sends nothing when the model is already the current one, or none is asked", async () => {
    for (const modelId of ["a", null]) {
      const agent = agentAnswering({});
      await configureSession({
        request: agent.request,
        sessionId: "s",
        session: NewSessionAnswerSchema.parse(MODEL_OPTION),
        acp,
        modelId,
        warn: () => {},
      });
      expect(agent.sent).toEqual([]);
    }
  });

  it("sets a boolean option with its type", async () => {
    const params: unknown[] = [];
    await configureSession({
      request: async (method, p) => {
        params.push([method, p]);
        return {};
      },
      sessionId: "s",
      session: NewSessionAnswerSchema.parse({
        sessionId: "s",
        configOptions: [{ id: "web", type: "boolean", currentValue: false }],
      }),
      acp: { ...acp, config_options: { web: true } },
      modelId: null,
      warn: () => {},
    });
    expect(params).toEqual([
      ["session/set_config_option", { sessionId: "s", configId: "web", type: "boolean", value: true }],
    ]);
  });
});
