import type { ApprovalTarget, ToolKind } from "@icode/agent-profiles/policy";
import { z } from "zod";
import type { AgentTool, ToolContext, ToolOutcome } from "../tool";

/** What a tool is made of: its zod input schema and what it does with a parsed input. */
export interface ToolDefinition<S extends z.ZodType> {
  name: string;
  kind: ToolKind;
  activityKind: AgentTool["activityKind"];
  description: string;
  input: S;
  title(input: z.output<S>): string;
  target?(input: z.output<S>, context: ToolContext): ApprovalTarget;
  execute(input: z.output<S>, context: ToolContext): Promise<ToolOutcome>;
}

/** The JSON Schema a model sees for a zod input schema (an object schema, without `$schema`). */
function inputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

/** A tool error for the model: its message, with what was wrong and how to call it right. */
export function toolError(error: string): ToolOutcome {
  return { ok: false, error };
}

/**
 * Builds an `AgentTool` from a definition: the JSON Schema comes from the zod schema, and every input is
 * checked against it before `title`, `target` or `execute` see it. Invalid arguments are a tool error that
 * names each problem, never a throw; so is an unexpected exception inside `execute`.
 */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): AgentTool {
  const parse = (input: unknown) => def.input.safeParse(input ?? {});
  const tool: AgentTool = {
    name: def.name,
    kind: def.kind,
    description: def.description,
    inputSchema: inputJsonSchema(def.input),
    activityKind: def.activityKind,
    title(input) {
      const parsed = parse(input);
      return parsed.success ? def.title(parsed.data) : def.name;
    },
    async execute(input, context) {
      const parsed = parse(input);
      if (!parsed.success) {
        return toolError(
          `invalid arguments for ${def.name}:\n${z.prettifyError(parsed.error)}\n` +
            `Call it with arguments matching its input schema.`,
        );
      }
      try {
        return await def.execute(parsed.data, context);
      } catch (error) {
        return toolError(`${def.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
  const target = def.target;
  if (target !== undefined) {
    return {
      ...tool,
      target(input, context) {
        const parsed = parse(input);
        return parsed.success ? target(parsed.data, context) : { type: "other" };
      },
    };
  }
  return tool;
}

/** A title's argument part, on one line and at most `max` characters. */
export function brief(text: string, max = 80): string {
  const line = text.replace(/\s+/gu, " ").trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
