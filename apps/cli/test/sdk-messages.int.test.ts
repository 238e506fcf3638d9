/**
 * What the SDK's messages say about a user's values and the SDK's own exceptions, as `icode workflow run`
 * prints them: "an int" (the article follows the type's name), and `AskUnavailable`, never a private module
 * path such as `chrys.workflows._runtime.AskUnavailable` that a user could not import.
 */
import { describe, expect, it } from "vitest";
import { icode, ofType, parseRunJson, project, recordOf, SLOW } from "./run-helpers";

const WORKFLOW = `from chrys.workflows import NodeContext, WorkflowBuilder, WorkflowValue


def returns_int(value: WorkflowValue):
    return 42


async def asks(value: WorkflowValue, ctx: NodeContext):
    answer = await ctx.ask("Proceed?")
    return WorkflowValue(answer.text)


wf = WorkflowBuilder("Messages")
node = wf.python("node", returns_int if value_kind() == "int" else asks)
wf.start(node)
wf.output(node)
workflow = wf.build()
`;

function workflow(kind: "int" | "ask"): string {
  return WORKFLOW.replace("value_kind()", JSON.stringify(kind));
}

describe("the SDK's messages through the CLI", SLOW, () => {
  it('say "an int" for a node that returns an int', async () => {
    const p = project({ ".chrys/workflows/messages.py": workflow("int") });
    const text = await icode(p, ["workflow", "run", "messages", "--trust"]);
    expect(text.exitCode).toBe(1);
    expect(text.stderr).toContain("the function returned an int; it must return a str or a WorkflowValue");
    expect(text.stderr).not.toMatch(/\ba int\b/);

    const json = await icode(p, ["workflow", "run", "messages", "--json"]);
    expect(parseRunJson(json)).toMatchObject({
      outcome: "node_failed",
      node_id: "node",
      error: expect.stringContaining("the function returned an int;"),
    });
  });

  it("name AskUnavailable by its own name, in the message and the traceback", async () => {
    const p = project({ ".chrys/workflows/messages.py": workflow("ask") });
    const text = await icode(p, ["workflow", "run", "messages", "--trust"]);
    expect(text.exitCode).toBe(1);
    expect(text.stderr).toMatch(/AskUnavailable: ctx\.ask\(\) is not available here/);

    const json = await icode(p, ["workflow", "run", "messages", "--json"]);
    const result = parseRunJson(json);
    expect(result).toMatchObject({
      outcome: "node_failed",
      error: expect.stringMatching(/^AskUnavailable: /),
    });
    // The run record keeps the traceback, whose exception line names the class the same way.
    const [failure] = ofType(recordOf(p, result).events, "node_failed");
    expect(failure?.error.traceback).toMatch(/^AskUnavailable: ctx\.ask\(\) is not available here/m);
    for (const output of [text.stdout, text.stderr, json.stdout, json.stderr, failure?.error.traceback]) {
      expect(output).not.toContain("chrys.workflows._");
    }
  });
});
