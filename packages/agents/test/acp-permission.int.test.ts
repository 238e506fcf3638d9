import type { AgentLogEntry } from "@icode/acp-agent-double";
import { describe, expect, it } from "vitest";
import { createAcpAttempt } from "../src/acp/run-attempt";
import type { ApprovalCallback } from "../src/attempt";
import { attemptContext, doubleSetup, failureOf } from "./support/acp";

const run = createAcpAttempt({ graceMs: 500 });

/** A turn that reports a shell call, asks to run it, and says which branch the answer took. */
const ASK_SHELL = {
  turns: [
    {
      steps: [
        { toolCall: { id: "sh1", title: "Run rm -rf build", kind: "execute" as const } },
        {
          permission: { title: "Run rm -rf build?", kind: "execute" as const },
          onAllowed: [{ message: "ran it" }],
          onRejected: [{ message: "did not run it" }],
        },
      ],
    },
  ],
};

function permissionOutcomes(entries: readonly AgentLogEntry[]): string[] {
  return entries.flatMap((e) =>
    e.event === "client_request" && e.method === "session/request_permission" ? [e.outcome] : [],
  );
}

describe("an ACP agent's permission requests", () => {
  it("are allowed under bypass, without asking, and recorded as permission activities", async () => {
    const setup = doubleSetup(ASK_SHELL);
    let asked = 0;
    const { context, io, transcripts } = await attemptContext({
      ...setup,
      approvalMode: "bypass",
      approve: async () => {
        asked += 1;
        return "reject";
      },
    });
    expect(await run(context)).toEqual({ status: "completed", value: { text: "ran it", data: null } });
    expect(asked).toBe(0);
    expect(io.of("permission")).toEqual([
      {
        kind: "permission",
        tool_call_id: "sh1",
        title: "Run rm -rf build?",
        decision: "allowed",
        by: "bypass",
      },
    ]);
    expect(permissionOutcomes(setup.entries())).toEqual(["allowed"]);
    expect(transcripts[0]?.tool_calls.find((c) => c.id === "sh1")).toMatchObject({ approval: "bypass" });
  });

  it("are asked of the approval callback under manual, which can allow", async () => {
    const setup = doubleSetup(ASK_SHELL);
    const requests: Parameters<ApprovalCallback>[0][] = [];
    const { context, io } = await attemptContext({
      ...setup,
      approvalMode: "manual",
      approve: async (request) => {
        requests.push(request);
        return "allow";
      },
    });
    expect(await run(context)).toEqual({ status: "completed", value: { text: "ran it", data: null } });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      runId: "run-1",
      activationId: "review#1",
      attempt: 1,
      toolCallId: "sh1",
      tool: { kind: "shell", name: "execute" },
      title: "Run rm -rf build?",
    });
    expect(io.of("permission")).toMatchObject([{ decision: "allowed", by: "manual: approval callback" }]);
  });

  it("are rejected when the callback rejects, and the rejected call is recorded so", async () => {
    const setup = doubleSetup(ASK_SHELL);
    const { context, io, transcripts } = await attemptContext({
      ...setup,
      approvalMode: "manual",
      approve: async () => "reject",
    });
    expect(await run(context)).toEqual({
      status: "completed",
      value: { text: "did not run it", data: null },
    });
    expect(io.of("permission")).toMatchObject([{ decision: "rejected", by: "manual: approval callback" }]);
    expect(permissionOutcomes(setup.entries())).toEqual(["rejected"]);
    expect(transcripts[0]?.tool_calls.find((c) => c.id === "sh1")).toMatchObject({
      status: "rejected",
      approval: "rejected (manual: approval callback)",
    });
  });

  it("are rejected under manual when no callback can be asked", async () => {
    const setup = doubleSetup(ASK_SHELL);
    const { context, io } = await attemptContext({ ...setup, approvalMode: "manual" });
    expect(await run(context)).toEqual({
      status: "completed",
      value: { text: "did not run it", data: null },
    });
    expect(io.of("permission")).toMatchObject([{ decision: "rejected", by: "manual: no approval callback" }]);
  });

  it("are allowed without asking when the approval rules do not require approval for the kind", async () => {
    const setup = doubleSetup({
      turns: [
        {
          steps: [
            {
              permission: { toolCallId: "x1", title: "Think harder?", kind: "think" as const },
              onAllowed: [{ message: "ok" }],
            },
          ],
        },
      ],
    });
    let asked = 0;
    const { context, io } = await attemptContext({
      ...setup,
      approvalMode: "manual",
      approve: async () => {
        asked += 1;
        return "reject";
      },
    });
    expect(await run(context)).toEqual({ status: "completed", value: { text: "ok", data: null } });
    expect(asked).toBe(0);
    expect(io.of("permission")).toMatchObject([
      { tool_call_id: "x1", decision: "allowed", by: "level_allows" },
    ]);
  });

  it("are answered cancelled when the attempt is cancelled while the callback decides", async () => {
    const setup = doubleSetup(ASK_SHELL);
    const { context, io } = await attemptContext({
      ...setup,
      approvalMode: "manual",
      approve: ({ signal }) =>
        new Promise((resolve) => {
          io.abort("user_cancelled");
          signal.addEventListener("abort", () => setTimeout(() => resolve("allow"), 50));
        }),
    });
    const error = failureOf(await run(context));
    expect(error).toMatchObject({ class: "acp_cancelled", retryable: false });
    expect(io.of("permission")).toMatchObject([{ decision: "cancelled" }]);
    expect(permissionOutcomes(setup.entries())).toEqual(["cancelled"]);
  });

  it("do not count a person's time on the request toward idle_timeout_seconds", async () => {
    const setup = doubleSetup(ASK_SHELL, { idle_timeout_seconds: 0.2 });
    const { context } = await attemptContext({
      ...setup,
      approvalMode: "manual",
      // Three idle limits long: the attempt would end acp_idle_timeout if this wait counted.
      approve: () => new Promise((resolve) => setTimeout(() => resolve("allow"), 600)),
    });
    expect(await run(context)).toEqual({ status: "completed", value: { text: "ran it", data: null } });
  });
});
