import { describe, expect, it } from "vitest";
import { finalJson, reportBlocked, submitHandoff } from "./replies";
import { ReplySchema } from "./reply";

describe("the pipeline handoff replies", () => {
  it("call the engine's tools, or end with the handoff in a json block", () => {
    expect(ReplySchema.parse(submitHandoff({ summary: "done" }))).toMatchObject({
      type: "tool_calls",
      calls: [{ name: "submit_handoff", arguments: { summary: "done" } }],
    });
    expect(ReplySchema.parse(reportBlocked("no key"))).toMatchObject({
      type: "tool_calls",
      calls: [{ name: "report_blocked", arguments: { reason: "no key" } }],
    });
    const reply = ReplySchema.parse(finalJson({ summary: "x" }, { before: "Here:" }));
    expect(reply).toMatchObject({ type: "text" });
    expect((reply as { text: string }).text).toBe('Here:\n\n```json\n{\n  "summary": "x"\n}\n```\n');
  });
});
