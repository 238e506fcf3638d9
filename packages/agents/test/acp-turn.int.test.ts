import { describe, expect, it } from "vitest";
import { createAcpAttempt } from "../src/acp/run-attempt";
import { agentPids, alive, attemptContext, doubleSetup } from "./support/acp";

const run = createAcpAttempt({ graceMs: 500 });

describe("an ACP attempt's normal turn", () => {
  it("returns the last message segment and reports text, thoughts, tool calls, plans and usage", async () => {
    const setup = doubleSetup({
      turns: [
        {
          steps: [
            { thought: "thinking" },
            { message: ["Look", "ing"] },
            { plan: [{ content: "read", status: "in_progress", priority: "high" }] },
            {
              toolCall: {
                id: "t1",
                title: "Read a.txt",
                kind: "read",
                rawInput: { path: "a.txt" },
                updates: [{ status: "completed", content: "abc" }],
              },
            },
            { message: ["Done", "."] },
            { usage: { inputTokens: 10, outputTokens: 2 } },
          ],
        },
      ],
    });
    const { context, io, transcripts } = await attemptContext({
      profile: setup.profile,
      workspace: setup.workspace,
    });
    const result = await run(context);
    expect(result).toEqual({ status: "completed", value: { text: "Done.", data: null } });
    expect(io.activities.map((a) => a.kind)).toEqual([
      "thought",
      "text",
      "text",
      "plan",
      "tool_call",
      "tool_call",
      "text",
      "text",
      "usage",
      "usage",
    ]);
    expect(transcripts).toHaveLength(1);
    console.log(JSON.stringify(transcripts[0], null, 1));
    for (const pid of agentPids(setup.entries())) expect(alive(pid)).toBe(false);
  });
});
