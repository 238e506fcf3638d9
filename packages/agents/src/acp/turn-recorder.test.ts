import type { SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import type { AgentActivity } from "@icode/workflow-scheduler";
import { describe, expect, it } from "vitest";
import { AgentTranscriptSchema } from "../transcript";
import { TurnRecorder } from "./turn-recorder";

function recorder() {
  const activities: AgentActivity[] = [];
  let clock = 1000;
  const r = new TurnRecorder({ attempt: 2, now: () => (clock += 1), emit: (a) => activities.push(a) });
  return { r, activities };
}

const say = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text },
});

describe("TurnRecorder segments", () => {
  it("joins consecutive message chunks, and starts a new segment after a thought, a plan or a tool call", () => {
    const { r } = recorder();
    r.update(say("a"));
    r.update(say("b"));
    r.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "t" } });
    r.update(say("c"));
    r.update({ sessionUpdate: "plan", entries: [] });
    r.update(say("d"));
    r.update({ sessionUpdate: "tool_call", toolCallId: "x", title: "X" });
    r.update(say("e"));
    expect(r.result("transcript")).toBe("ab\n\nc\n\nd\n\ne");
    expect(r.result("last_segment")).toBe("e");
  });

  it("does not split a segment on updates that carry no conversation", () => {
    const { r } = recorder();
    r.update(say("one "));
    r.update({ sessionUpdate: "usage_update", used: 10, size: 100 });
    r.update({ sessionUpdate: "available_commands_update", availableCommands: [] });
    r.update({ sessionUpdate: "current_mode_update", currentModeId: "code" });
    r.update(say("two"));
    expect(r.result("transcript")).toBe("one two");
  });

  it("takes text from text and resource chunks, and nothing from images", () => {
    const { r } = recorder();
    r.update({
      sessionUpdate: "agent_message_chunk",
      content: { type: "image", data: "AAAA", mimeType: "image/png" },
    });
    expect(r.result("last_segment")).toBe("");
    r.update({
      sessionUpdate: "agent_message_chunk",
      content: { type: "resource_link", uri: "file:///a", name: "a" },
    });
    expect(r.result("last_segment")).toBe("file:///a");
  });

  it("is empty when the agent wrote nothing", () => {
    const { r } = recorder();
    expect(r.result("last_segment")).toBe("");
    expect(r.result("transcript")).toBe("");
  });
});

describe("TurnRecorder tool calls", () => {
  it("merges updates into the call it names and reports the merged state", () => {
    const { r, activities } = recorder();
    r.update({
      sessionUpdate: "tool_call",
      toolCallId: "c1",
      title: "Edit a",
      kind: "edit",
      rawInput: { path: "a" },
    });
    r.update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" });
    r.update({
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      status: "completed",
      content: [{ type: "diff", path: "/w/a", oldText: "x", newText: "y" }],
    });
    expect(activities).toEqual([
      {
        kind: "tool_call",
        tool_call_id: "c1",
        title: "Edit a",
        tool_kind: "edit",
        status: "pending",
        input: { path: "a" },
        result: null,
      },
      {
        kind: "tool_call",
        tool_call_id: "c1",
        title: "Edit a",
        tool_kind: "edit",
        status: "in_progress",
        input: { path: "a" },
        result: null,
      },
      {
        kind: "tool_call",
        tool_call_id: "c1",
        title: "Edit a",
        tool_kind: "edit",
        status: "completed",
        input: { path: "a" },
        result: "[diff of /w/a]\ny",
      },
    ]);
  });

  it("falls back to rawOutput, and starts a call an update names first", () => {
    const { r, activities } = recorder();
    r.update({
      sessionUpdate: "tool_call_update",
      toolCallId: "c9",
      title: "Fetch",
      kind: "fetch",
      status: "completed",
      rawOutput: { code: 200 },
    });
    expect(activities.at(-1)).toMatchObject({
      tool_call_id: "c9",
      status: "completed",
      result: '{"code":200}',
    });
  });

  it("records calls that never finished as cancelled, and rejected ones as rejected, in a valid transcript", () => {
    const { r } = recorder();
    r.prompt("go");
    r.update({
      sessionUpdate: "tool_call",
      toolCallId: "run",
      title: "Run",
      kind: "execute",
      status: "in_progress",
    });
    r.update({ sessionUpdate: "tool_call", toolCallId: "rm", title: "Delete", kind: "delete" });
    r.permission("rm", "Delete?", "rejected", "manual: approval callback");
    r.update({
      sessionUpdate: "tool_call",
      toolCallId: "ok",
      title: "Read",
      kind: "read",
      status: "completed",
    });
    r.update({
      sessionUpdate: "tool_call",
      toolCallId: "bad",
      title: "Search",
      kind: "search",
      status: "failed",
    });
    r.fileRequest({
      method: "fs/read_text_file",
      kind: "read",
      input: { path: "/w/a" },
      ok: true,
      output: "read 3 characters",
      startedAt: 5,
    });
    const transcript = r.transcript();
    expect(transcript.tool_calls.map((c) => [c.id, c.status, c.approval])).toEqual([
      ["run", "cancelled", "not_requested"],
      ["rm", "rejected", "rejected (manual: approval callback)"],
      ["ok", "completed", "not_requested"],
      ["bad", "failed", "not_requested"],
      ["fs_1", "completed", "not_required"],
    ]);
    expect(
      transcript.messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.is_error]),
    ).toEqual([
      ["ok", false],
      ["bad", true],
    ]);
    expect(() =>
      AgentTranscriptSchema.parse({
        node_id: "n",
        activation_id: "n#1",
        attempt: 2,
        runtime: "acp",
        profile: "P",
        model: null,
        continued_from: null,
        ...transcript,
        stderr: null,
        outcome: "completed",
      }),
    ).not.toThrow();
  });

  it("reports tool kinds the activity union does not know as other", () => {
    const { r, activities } = recorder();
    r.update({ sessionUpdate: "tool_call", toolCallId: "z", title: "Z", kind: "teleport" as "other" });
    expect(activities[0]).toMatchObject({ tool_kind: "other" });
  });
});

describe("TurnRecorder usage", () => {
  it("reports no usage until the agent says any", () => {
    expect(recorder().r.usage()).toBeNull();
  });

  it("keeps the largest context size as the total, the cost, and lets the final usage split the tokens", () => {
    const { r, activities } = recorder();
    r.update({ sessionUpdate: "usage_update", used: 50, size: 1000, cost: { amount: 0.1, currency: "USD" } });
    r.update({ sessionUpdate: "usage_update", used: 30, size: 1000 });
    expect(r.usage()).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 50,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: { amount: 0.1, currency: "USD" },
    });
    r.finalUsage({
      totalTokens: 70,
      inputTokens: 60,
      outputTokens: 10,
      cachedReadTokens: 5,
      thoughtTokens: 2,
    });
    expect(activities.filter((a) => a.kind === "usage")).toHaveLength(3);
    expect(r.usage()).toEqual({
      input_tokens: 60,
      output_tokens: 10,
      total_tokens: 70,
      cached_input_tokens: 5,
      reasoning_tokens: 2,
      cost: { amount: 0.1, currency: "USD" },
    });
  });
});
