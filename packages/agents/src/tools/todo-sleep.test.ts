import { describe, expect, it } from "vitest";
import type { ToolContext } from "../tool";
import { sleepTool } from "./sleep";
import { todoTool } from "./todo";

const context: ToolContext = { cwd: "/", signal: new AbortController().signal, toolCallId: "call-1" };

describe("todo_write", () => {
  it("replaces the list on each call, keeps it for the attempt, and returns it as a plan", async () => {
    const todo = todoTool();
    const first = await todo.tool.execute(
      {
        todos: [
          { content: "read the code", status: "completed" },
          { content: "fix the bug", status: "in_progress", priority: "high" },
          { content: "write a test", status: "pending", priority: "low" },
        ],
      },
      context,
    );
    expect(first).toEqual({
      ok: true,
      output:
        "to-do list (1/3 completed):\n1. [x] read the code\n2. [~] fix the bug (high)\n3. [ ] write a test (low)",
      plan: [
        { content: "read the code", status: "completed", priority: "medium" },
        { content: "fix the bug", status: "in_progress", priority: "high" },
        { content: "write a test", status: "pending", priority: "low" },
      ],
    });
    await todo.tool.execute({ todos: [{ content: "ship", status: "pending" }] }, context);
    expect(todo.current()).toEqual([{ content: "ship", status: "pending", priority: "medium" }]);
    expect(todoTool().current()).toEqual([]);
    expect(await todo.tool.execute({ todos: [{ content: "x", status: "done" }] }, context)).toMatchObject({
      ok: false,
    });
    expect(todo.current()).toHaveLength(1);
  });
});

describe("sleep", () => {
  it("waits, and a cancel ends the wait", async () => {
    expect(await sleepTool().execute({ seconds: 0.01 }, context)).toEqual({
      ok: true,
      output: "waited 0.01 s",
    });
    const controller = new AbortController();
    const waiting = sleepTool().execute({ seconds: 300 }, { ...context, signal: controller.signal });
    controller.abort();
    expect(await waiting).toEqual({ ok: false, error: "the wait was cancelled" });
    expect(await sleepTool().execute({ seconds: 301 }, context)).toMatchObject({ ok: false });
  });
});
