/**
 * The tool kinds of the agent-profile reference, section 3: which can be named in `tools.builtins` and the
 * tools each gives. `shell` tool names depend on the shell found at run time, and `sub_agent`, `mcp` and
 * `skill`/`context` tools come from the profile, so those lists are the fixed names only.
 */
export const TOOL_KINDS = {
  shell: { builtin: true, purpose: "Run shell commands", tools: [] },
  "filesystem.read": {
    builtin: true,
    purpose: "Read files, view images",
    tools: ["read_file", "view_image"],
  },
  "filesystem.write": {
    builtin: true,
    purpose: "Create, overwrite and edit files",
    tools: ["write_file", "edit_file"],
  },
  search: { builtin: true, purpose: "Search file contents and names", tools: ["grep", "glob"] },
  web_search: { builtin: true, purpose: "Search the web for URLs and summaries", tools: ["web_search"] },
  web_fetch: { builtin: true, purpose: "Read a web page by URL", tools: ["web_fetch"] },
  ask_user: { builtin: true, purpose: "Ask the user during a task", tools: ["ask_user"] },
  sleep: { builtin: true, purpose: "Wait", tools: ["sleep"] },
  doc_converter: { builtin: true, purpose: "Convert PDF and Office documents", tools: ["convert_document"] },
  todo: { builtin: true, purpose: "Keep a to-do list", tools: ["todo_write"] },
  sub_agent: { builtin: false, purpose: "Call sub-agents", tools: [] },
  mcp: { builtin: false, purpose: "MCP server tools and on-demand loading controls", tools: [] },
  skill: {
    builtin: false,
    purpose: "Load skills, read their resources, run their scripts",
    tools: ["load_skill", "read_skill_resource", "run_skill_script"],
  },
  context: {
    builtin: false,
    purpose: "Compact and query conversation context",
    tools: ["compress_context", "recall_context", "list_compressed_contexts"],
  },
} as const satisfies Record<string, { builtin: boolean; purpose: string; tools: readonly string[] }>;

export type ToolKind = keyof typeof TOOL_KINDS;

/** The kinds `tools.builtins` accepts, in the order of the reference's table. */
export const BUILTIN_TOOL_KINDS = [
  "shell",
  "filesystem.read",
  "filesystem.write",
  "search",
  "web_search",
  "web_fetch",
  "ask_user",
  "sleep",
  "doc_converter",
  "todo",
] as const satisfies readonly ToolKind[];
export type BuiltinToolKind = (typeof BUILTIN_TOOL_KINDS)[number];

/** Shell tool names by shell (section 3); `git_bash` only on Windows with Git Bash found. */
export const SHELL_TOOL_NAMES = ["bash", "zsh", "sh", "pwsh", "powershell", "cmd", "git_bash"] as const;

export function isToolKind(value: string): value is ToolKind {
  return Object.hasOwn(TOOL_KINDS, value);
}

export function isBuiltinToolKind(value: string): value is BuiltinToolKind {
  return (BUILTIN_TOOL_KINDS as readonly string[]).includes(value);
}
