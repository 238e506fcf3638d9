import { MAX_TOOL_NAME_LENGTH, mcpControlToolNames, mcpToolName } from "@icode/agent-profiles/policy";
import type { Prompt, Tool } from "@modelcontextprotocol/client";
import { z } from "zod";
import type { AgentTool, ToolOutcome } from "../../tool";
import type { ToolsetWarningCode } from "../codes";
import { brief, defineTool, toolError } from "../define-tool";
import type { McpConnection } from "./connect";
import { blocksToText, limitResult, toolResultOutcome } from "./tool-result";

/** The tools one MCP server contributes; with progressive disclosure, what is visible changes. */
export interface McpToolGroup {
  readonly serverName: string;
  /** What the model sees now: every tool, or the control tools, the prompts and the loaded tools. */
  visible(): readonly AgentTool[];
}

export interface McpToolGroupOptions {
  vision: boolean;
  /** Claims a tool name for the toolset; false when another tool already has it. */
  reserve(name: string): boolean;
  warn(code: ToolsetWarningCode, message: string): void;
}

/** A failed MCP request as a message for the model (the SDK reports a cancel like a timeout). */
function mcpRequestError(
  connection: McpConnection,
  what: string,
  error: unknown,
  signal: AbortSignal,
): string {
  const server = connection.server;
  if (signal.aborted) return `${what} was cancelled; MCP server "${server.name}" was told to stop it`;
  if ((error as { code?: unknown }).code === "REQUEST_TIMEOUT") {
    return `MCP server "${server.name}" did not answer ${what} within ${server.timeout} s (its timeout); try again or do without it`;
  }
  return `MCP server "${server.name}" failed ${what}: ${error instanceof Error ? error.message : String(error)}`;
}

function isArguments(input: unknown): input is Record<string, unknown> | undefined | null {
  return input === undefined || input === null || (typeof input === "object" && !Array.isArray(input));
}

function callTitle(name: string, input: unknown): string {
  const args = input === undefined || input === null ? "" : JSON.stringify(input);
  return args === "" || args === "{}" ? name : `${name} ${brief(args, 60)}`;
}

function serverTool(connection: McpConnection, tool: Tool, name: string, vision: boolean): AgentTool {
  const server = connection.server;
  return {
    name,
    kind: "mcp",
    activityKind: "mcp",
    description: tool.description ?? `Tool ${tool.name} of the MCP server ${server.name}.`,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    title: (input) => callTitle(name, input),
    async execute(input, context): Promise<ToolOutcome> {
      if (!isArguments(input)) return toolError(`${name} takes an object of arguments`);
      try {
        const result = await connection.client.callTool(
          { name: tool.name, arguments: input ?? {} },
          { timeout: connection.timeoutMs, signal: context.signal },
        );
        return toolResultOutcome(result, {
          maxTokens: server.max_tool_result_tokens,
          serverName: server.name,
          vision,
        });
      } catch (error) {
        return toolError(mcpRequestError(connection, `tools/call ${tool.name}`, error, context.signal));
      }
    },
  };
}

function promptTool(connection: McpConnection, prompt: Prompt, name: string): AgentTool {
  const server = connection.server;
  const args = prompt.arguments ?? [];
  return {
    name,
    kind: "mcp",
    activityKind: "mcp",
    description:
      `Get the prompt "${prompt.name}" of the MCP server ${server.name}` +
      `${prompt.description ? `: ${prompt.description}` : ""}. Returns its messages as text.`,
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        args.map((a) => [
          a.name,
          { type: "string", ...(a.description ? { description: a.description } : {}) },
        ]),
      ),
      required: args.filter((a) => a.required === true).map((a) => a.name),
      additionalProperties: false,
    },
    title: (input) => callTitle(name, input),
    async execute(input, context): Promise<ToolOutcome> {
      if (!isArguments(input)) return toolError(`${name} takes an object of arguments`);
      const values: Record<string, string> = {};
      for (const [key, value] of Object.entries(input ?? {})) {
        if (typeof value !== "string") return toolError(`argument ${key} of ${name} must be a string`);
        values[key] = value;
      }
      try {
        const result = await connection.client.getPrompt(
          { name: prompt.name, arguments: values },
          { timeout: connection.timeoutMs, signal: context.signal },
        );
        const text = result.messages
          .map((m) => `${m.role}: ${blocksToText([m.content as { type: string }], false).text}`)
          .join("\n\n");
        return { ok: true, output: limitResult(text, server.max_tool_result_tokens, server.name) };
      } catch (error) {
        return toolError(mcpRequestError(connection, `prompts/get ${prompt.name}`, error, context.signal));
      }
    },
  };
}

const NamesInput = z.strictObject({
  names: z.array(z.string().min(1)).min(1).describe("Tool names, as listed by the list tool"),
});

/**
 * The tools of one connected server (agent-profiles.md 2.2 and 3): `allowed_tools` narrows them (names the
 * server does not offer are warned about), each is named `mcpToolName(prefix, name)`, its prompts become
 * tools when `load_prompts` is on (`<prefix>_prompt_<name>`, or `prompt_<name>`), and with
 * `use_progressive_disclosure` only `always_load` tools start visible, behind the three control tools of
 * `mcpControlToolNames`. A name longer than 64 characters, or one the toolset already has, is skipped with
 * a warning.
 */
export function mcpToolGroup(connection: McpConnection, options: McpToolGroupOptions): McpToolGroup {
  const server = connection.server;
  const prefix = server.tool_name_prefix;
  const offered = new Set(connection.tools.map((t) => t.name));
  for (const name of server.allowed_tools ?? []) {
    if (!offered.has(name)) {
      options.warn(
        "mcp_allowed_tool_missing",
        `allowed_tools of MCP server "${server.name}" lists ${name}, which the server does not offer; the server has ${[...offered].join(", ") || "no tools"}`,
      );
    }
  }
  const allowed = server.allowed_tools === null ? null : new Set(server.allowed_tools);
  const claim = (name: string, what: string): boolean => {
    if (name.length > MAX_TOOL_NAME_LENGTH) {
      options.warn(
        "tool_name_invalid",
        `${what} of MCP server "${server.name}" would be named ${name}, longer than ${MAX_TOOL_NAME_LENGTH} characters; it is left out (use a shorter tool_name_prefix)`,
      );
      return false;
    }
    if (!options.reserve(name)) {
      options.warn(
        "tool_name_conflict",
        `${what} of MCP server "${server.name}" would be named ${name}, which another tool already has; it is left out (set a tool_name_prefix)`,
      );
      return false;
    }
    return true;
  };

  const pool = new Map<string, { original: string; tool: AgentTool }>();
  for (const tool of connection.tools) {
    if (allowed !== null && !allowed.has(tool.name)) continue;
    const name = mcpToolName(prefix, tool.name);
    if (claim(name, `tool ${tool.name}`)) {
      pool.set(name, { original: tool.name, tool: serverTool(connection, tool, name, options.vision) });
    }
  }
  const prompts: AgentTool[] = [];
  for (const prompt of connection.prompts) {
    const name = mcpToolName(prefix, `prompt_${prompt.name}`);
    if (claim(name, `prompt ${prompt.name}`)) prompts.push(promptTool(connection, prompt, name));
  }
  if (!server.use_progressive_disclosure) {
    const all = [...[...pool.values()].map((p) => p.tool), ...prompts];
    return { serverName: server.name, visible: () => all };
  }

  const loaded = new Set<string>();
  for (const original of server.always_load) {
    const entry = [...pool.entries()].find(([, p]) => p.original === original);
    if (entry === undefined) {
      options.warn(
        "mcp_allowed_tool_missing",
        `always_load of MCP server "${server.name}" lists ${original}, which is not among its tools on offer`,
      );
    } else loaded.add(entry[0]);
  }
  const lookup = (name: string): string | undefined =>
    pool.has(name) ? name : [...pool.entries()].find(([, p]) => p.original === name)?.[0];
  const [listName, loadName, unloadName] = mcpControlToolNames(prefix, server.name);
  const controls: AgentTool[] = [];
  if (claim(listName, "the list control tool")) {
    controls.push(
      defineTool({
        name: listName,
        kind: "mcp",
        activityKind: "mcp",
        description: `List the tools of the MCP server ${server.name} that can be loaded with ${loadName}, and which are loaded.`,
        input: z.strictObject({}),
        title: () => listName,
        async execute() {
          if (pool.size === 0) return { ok: true, output: `MCP server "${server.name}" offers no tools` };
          const lines = [...pool.entries()].map(
            ([name, p]) =>
              `- ${name}${loaded.has(name) ? " [loaded]" : ""}: ${brief(p.tool.description, 200)}`,
          );
          return {
            ok: true,
            output: [
              `Tools of MCP server "${server.name}" (load with ${loadName}, unload with ${unloadName}):`,
              ...lines,
            ].join("\n"),
          };
        },
      }),
    );
  }
  const change =
    (load: boolean) =>
    async (input: { names: string[] }): Promise<ToolOutcome> => {
      const done: string[] = [];
      const unknown: string[] = [];
      for (const requested of input.names) {
        const name = lookup(requested);
        if (name === undefined) unknown.push(requested);
        else {
          if (load) loaded.add(name);
          else loaded.delete(name);
          done.push(name);
        }
      }
      if (done.length === 0) {
        return toolError(
          `MCP server "${server.name}" has no tool ${unknown.join(", ")} on offer; call ${listName} to see its tools`,
        );
      }
      const verb = load ? "loaded" : "unloaded";
      const when = load ? " (callable from your next step)" : "";
      const note = unknown.length === 0 ? "" : `; not found: ${unknown.join(", ")}`;
      return { ok: true, output: `${verb} ${done.join(", ")}${when}${note}` };
    };
  if (claim(loadName, "the load control tool")) {
    controls.push(
      defineTool({
        name: loadName,
        kind: "mcp",
        activityKind: "mcp",
        description: `Load tools of the MCP server ${server.name} so that you can call them (see ${listName}).`,
        input: NamesInput,
        title: (input) => `${loadName} ${brief(input.names.join(", "))}`,
        execute: change(true),
      }),
    );
  }
  if (claim(unloadName, "the unload control tool")) {
    controls.push(
      defineTool({
        name: unloadName,
        kind: "mcp",
        activityKind: "mcp",
        description: `Unload tools of the MCP server ${server.name} you no longer need.`,
        input: NamesInput,
        title: (input) => `${unloadName} ${brief(input.names.join(", "))}`,
        execute: change(false),
      }),
    );
  }
  return {
    serverName: server.name,
    visible: () => [
      ...controls,
      ...prompts,
      ...[...pool.entries()].filter(([n]) => loaded.has(n)).map(([, p]) => p.tool),
    ],
  };
}
