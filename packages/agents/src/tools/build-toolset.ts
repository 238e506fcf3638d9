import { discoverSkills, subAgentTools } from "@icode/agent-profiles/policy";
import type { AgentTool, Toolset, ToolsetOptions } from "../tool";
import type { ToolsetWarning, ToolsetWarningCode } from "./codes";
import { editFileTool } from "./edit-file";
import { findShell } from "./find-shell";
import { globTool } from "./glob";
import { grepTool } from "./grep";
import { connectMcpServer, type McpConnection } from "./mcp/connect";
import { type McpToolGroup, mcpToolGroup } from "./mcp/server-tools";
import { readFileTool } from "./read-file";
import { shellTool } from "./shell";
import { skillInstructions, skillTools } from "./skills";
import { sleepTool } from "./sleep";
import { subAgentToolset } from "./sub-agents";
import { todoTool } from "./todo";
import { viewImageTool } from "./view-image";
import { writeFileTool } from "./write-file";

/**
 * Built-in kinds the native loop does not offer, and why: each is left out with one `tool_kind_unavailable`
 * warning when a profile enables it.
 */
export const UNAVAILABLE_TOOL_KINDS = {
  ask_user: "a workflow agent node has nobody to answer questions while it runs",
  web_search: "this engine does not implement web search yet",
  web_fetch: "this engine does not implement fetching web pages yet",
  doc_converter: "this engine does not implement document conversion yet",
} as const;

/**
 * The tools of one native agent attempt (issue 18 item 4): the built-in kinds `tools.builtins` enables,
 * the skills the profile finds, one tool per sub-agent, and the tools and prompts of every enabled MCP
 * server, connected in parallel. Names are unique: the first tool to take a name keeps it (built-ins,
 * then skills, then sub-agents, then MCP servers in profile order) and a later one is left out with a
 * warning. Nothing here fails the attempt: a server that cannot connect, a skipped skill or sub-agent, a
 * kind we do not offer, are `warnings`. `close()` ends every MCP connection and server process and every
 * command still running; call it once the attempt ends.
 */
export async function buildToolset(options: ToolsetOptions): Promise<Toolset> {
  const { profile, cwd, env } = options;
  const warnings: ToolsetWarning[] = [];
  const warn = (code: ToolsetWarningCode, message: string) => warnings.push({ code, message });
  const running = new Set<() => Promise<void>>();
  const names = new Set<string>();
  const reserve = (name: string): boolean => {
    if (names.has(name)) return false;
    names.add(name);
    return true;
  };
  const fixed: AgentTool[] = [];
  const add = (tool: AgentTool, what: string) => {
    if (reserve(tool.name)) fixed.push(tool);
    else
      warn(
        "tool_name_conflict",
        `${what} ${tool.name} is left out: another tool of this agent has that name`,
      );
  };
  if (profile.kind === "acp") return toolset([], [], [], warnings, running, []);

  for (const kind of profile.tools.builtins) {
    if (kind === "filesystem.read") {
      add(readFileTool(), "the built-in tool");
      if (options.vision) add(viewImageTool(), "the built-in tool");
    } else if (kind === "filesystem.write") {
      add(writeFileTool(), "the built-in tool");
      add(editFileTool(), "the built-in tool");
    } else if (kind === "search") {
      add(grepTool(), "the built-in tool");
      add(globTool(), "the built-in tool");
    } else if (kind === "shell") {
      add(
        shellTool({ shell: findShell(env), filter: profile.tools.shell_filter, env, running }),
        "the built-in tool",
      );
    } else if (kind === "todo") {
      add(todoTool().tool, "the built-in tool");
    } else if (kind === "sleep") {
      add(sleepTool(), "the built-in tool");
    } else if (Object.hasOwn(UNAVAILABLE_TOOL_KINDS, kind)) {
      const why = UNAVAILABLE_TOOL_KINDS[kind as keyof typeof UNAVAILABLE_TOOL_KINDS];
      warn(
        "tool_kind_unavailable",
        `tools.builtins of profile "${profile.name}" enables ${kind}, which is left out: ${why}`,
      );
    }
  }

  const found = await discoverSkills(profile, {
    cwd,
    chrysHome: options.chrysHome,
    homeDir: options.homeDir,
    settings: options.config.settings,
  });
  for (const problem of found.problems) {
    const code = problem.code === "skill_root_unreadable" ? "skill_root_unreadable" : "skill_invalid";
    const where = [problem.file, problem.field].filter((p) => p !== null).join(": ");
    warn(code, where === "" ? problem.message : `${where}: ${problem.message}`);
  }
  if (found.skills.length > 0) {
    const tools = skillTools({
      skills: found.skills,
      scriptTimeoutSeconds: profile.skills.script_timeout,
      env,
      running,
    });
    for (const tool of tools) add(tool, "the skill tool");
  }

  const subAgents = subAgentTools(options.config, profile);
  for (const message of subAgents.warnings) warn("sub_agent_skipped", message);
  for (const tool of subAgentToolset(
    subAgents.tools,
    profile.sub_agents.max_total_concurrency,
    options.runSubAgent,
  )) {
    add(tool, "the sub-agent tool");
  }

  const servers = profile.tools.mcp.filter((s) => s.enabled);
  const results = await Promise.all(
    servers.map((server) => connectMcpServer(server, { cwd, env, signal: options.signal })),
  );
  const connections: McpConnection[] = [];
  const groups: McpToolGroup[] = [];
  const instructions: string[] = [];
  for (const result of results) {
    if (!result.ok) {
      warn("mcp_server_unavailable", `${result.message}; the agent runs without it`);
      continue;
    }
    connections.push(result.connection);
    groups.push(mcpToolGroup(result.connection, { vision: options.vision, reserve, warn }));
    const text = result.connection.instructions?.trim();
    if (text)
      instructions.push(`Instructions of the MCP server "${result.connection.server.name}":\n${text}`);
  }
  if (found.skills.length > 0) instructions.push(skillInstructions(found.skills));
  return toolset(fixed, groups, instructions, warnings, running, connections);
}

function toolset(
  fixed: readonly AgentTool[],
  groups: readonly McpToolGroup[],
  instructions: readonly string[],
  warnings: readonly ToolsetWarning[],
  running: Set<() => Promise<void>>,
  connections: readonly McpConnection[],
): Toolset {
  let closing: Promise<void> | undefined;
  return {
    get tools() {
      return groups.length === 0 ? fixed : [...fixed, ...groups.flatMap((g) => g.visible())];
    },
    instructions,
    warnings,
    close() {
      closing ??= (async () => {
        await Promise.all([...[...running].map((stop) => stop()), ...connections.map((c) => c.close())]);
      })();
      return closing;
    },
  };
}
