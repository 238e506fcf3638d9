import type { AgentConfig, AgentProfile } from "@icode/agent-profiles";
import type { ApprovalTarget, ToolKind } from "@icode/agent-profiles/policy";
import type { AgentActivity } from "@icode/workflow-scheduler";

type ActivityToolKind = Extract<AgentActivity, { kind: "tool_call" }>["tool_kind"];
type PlanEntry = Extract<AgentActivity, { kind: "plan" }>["entries"][number];

/**
 * One tool the native agent loop offers its model: built-in (files, search, shell, todo, sleep), an MCP
 * server's, a sub-agent, a skill. The loop decides approval before `execute` (with `kind`, `name` and
 * `target`), reports the call as `agent_activity`, and hands the outcome back to the model. A tool never
 * throws for a failure the model should see: that is `{ ok: false, error }`.
 */
export interface AgentTool {
  /** The name the model calls it by, unique in a toolset (an MCP tool's carries its prefix). */
  readonly name: string;
  /** Its tool kind, as `tools.builtins` and `approval.overrides` name it (agent profiles §3). */
  readonly kind: ToolKind;
  readonly description: string;
  /** JSON Schema of its arguments (an object schema), as the model sees it. */
  readonly inputSchema: Record<string, unknown>;
  /** How the activity stream labels it (ACP's tool kinds). */
  readonly activityKind: ActivityToolKind;
  /** A short title for progress lines, from the arguments (`read_file src/app.ts`). */
  title(input: unknown): string;
  /** What the approval safety rules look at (a command line, a path), when it touches something. */
  target?(input: unknown, context: ToolContext): ApprovalTarget;
  execute(input: unknown, context: ToolContext): Promise<ToolOutcome>;
}

export interface ToolContext {
  /** The agent's working directory: file tools resolve paths against it and stay inside it. */
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly toolCallId: string;
}

/**
 * What a tool call gave back: text for the model, or an error message for it. `todo_write` adds the list
 * as `plan` (for a `plan` activity); `view_image` and MCP image results add `media` (base64 images, given
 * only when the model has `vision`), for a tool result the model can look at.
 */
export type ToolOutcome =
  | {
      ok: true;
      output: string;
      plan?: readonly PlanEntry[];
      media?: readonly { readonly mediaType: string; readonly data: string }[];
    }
  | { ok: false; error: string };

/** The tools of one agent attempt, and what must be let go after it (MCP connections). */
export interface Toolset {
  /**
   * The tools the model may call now. Read it before every model request: MCP servers with
   * `use_progressive_disclosure` add and remove tools while the attempt runs (`<prefix>_load_tool`).
   */
  readonly tools: readonly AgentTool[];
  /** Text for the instructions: MCP servers' instructions (`expose_instructions`), the skills on offer. */
  readonly instructions: readonly string[];
  /** Problems that did not stop the attempt (an MCP server that could not connect, a skipped skill). */
  readonly warnings: readonly { code: string; message: string }[];
  close(): Promise<void>;
}

/** Runs a sub-agent to completion for a sub-agent tool: its final reply, or why it failed. */
export type SubAgentRunner = (
  profile: AgentProfile,
  task: string,
  signal: AbortSignal,
) => Promise<ToolOutcome>;

export interface ToolsetOptions {
  readonly profile: AgentProfile;
  readonly config: AgentConfig;
  readonly cwd: string;
  /** The engine process's environment (`{{NAME}}` templates of MCP servers). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly chrysHome: string;
  readonly homeDir: string;
  readonly signal: AbortSignal;
  /** Whether the model accepts images (`view_image`). */
  readonly vision: boolean;
  readonly runSubAgent: SubAgentRunner;
}
