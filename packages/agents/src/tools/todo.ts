import { z } from "zod";
import type { AgentTool } from "../tool";
import { defineTool } from "./define-tool";

/** A to-do item as the `plan` activity has it (scheduler `PlanEntry`). */
const TodoEntrySchema = z.object({
  content: z.string(),
  status: z.enum(["pending", "in_progress", "completed"]),
  priority: z.enum(["high", "medium", "low"]),
});
type Plan = z.infer<typeof TodoEntrySchema>[];

const TodoInput = z.strictObject({
  todos: z
    .array(
      z.strictObject({
        content: z.string().min(1).describe("What to do"),
        status: TodoEntrySchema.shape.status,
        priority: TodoEntrySchema.shape.priority.optional().describe("Default medium"),
      }),
    )
    .describe("The whole list, replacing the previous one"),
});

const MARK = { pending: "[ ]", in_progress: "[~]", completed: "[x]" } as const;

/** The list as the model reads it back: one line per item, with its status mark and priority. */
export function renderTodos(entries: Plan): string {
  if (entries.length === 0) return "the to-do list is empty";
  const done = entries.filter((e) => e.status === "completed").length;
  return [
    `to-do list (${done}/${entries.length} completed):`,
    ...entries.map(
      (e, i) =>
        `${i + 1}. ${MARK[e.status]} ${e.content}${e.priority === "medium" ? "" : ` (${e.priority})`}`,
    ),
  ].join("\n");
}

/**
 * `todo_write`: the agent's to-do list for this attempt. Each call replaces the list; the outcome carries it
 * as `plan` (for a `plan` activity) and as text. `current()` is the list as it stands.
 */
export function todoTool(): { tool: AgentTool; current(): Plan } {
  let list: Plan = [];
  const tool = defineTool({
    name: "todo_write",
    kind: "todo",
    activityKind: "think",
    description:
      "Keep a to-do list for the task: send the whole list each time, each item with a status " +
      "(pending, in_progress, completed). Use it to plan multi-step work and show progress.",
    input: TodoInput,
    title: (input) => `todo_write (${input.todos.length} items)`,
    async execute(input) {
      list = input.todos.map((t) => ({
        content: t.content,
        status: t.status,
        priority: t.priority ?? "medium",
      }));
      return { ok: true, output: renderTodos(list), plan: list.map((e) => ({ ...e })) };
    },
  });
  return { tool, current: () => list.map((e) => ({ ...e })) };
}
