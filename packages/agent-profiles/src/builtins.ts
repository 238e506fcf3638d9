import {
  type AgentProfileFile,
  AgentProfileFileSchema,
  type AgentProfileSettings,
} from "./schema/agent-profile";

// The four agents shipped with the engine (agent-profiles.md 1.5). The instruction texts are ours.

const MAIN_APPROVAL = { shell: "require", "skill.run_skill_script": "require", todo: "skip" } as const;

const CODE: AgentProfileFile = {
  name: "Code",
  id: "b011c0de0001",
  display_name: "Code Agent",
  description: "General software engineering: reads, changes and tests code in the working directory.",
  instructions: [
    "You are a software engineer working in the user's repository.",
    "Understand the task and the code around it before changing anything: read the relevant files and their tests.",
    "Make the smallest change that solves the task, in the style of the surrounding code.",
    "Run the project's tests or checks that cover your change, and report what you ran and what happened.",
    "If the task is ambiguous or risky, say so and ask before acting; never invent results you did not observe.",
    "Hand broad read-only investigation to explore_agent and self-contained implementation work to general_agent.",
  ],
  tools: {
    builtins: [
      "filesystem.read",
      "filesystem.write",
      "search",
      "shell",
      "ask_user",
      "sleep",
      "doc_converter",
      "todo",
    ],
  },
  approval: { default: "auto", overrides: { ...MAIN_APPROVAL, "filesystem.write": "require" } },
  memory: { files: ["AGENTS.md"] },
  sub_agents: {
    max_total_concurrency: 3,
    agents: [
      { profile: "Explore", tool_name: "explore_agent" },
      { profile: "General", tool_name: "general_agent" },
    ],
  },
};

const QA: AgentProfileFile = {
  name: "QA",
  id: "b0119a000005",
  display_name: "Q&A Agent",
  description: "Answers questions about the code and the project without changing anything.",
  instructions: [
    "You answer questions about the user's repository and its behaviour.",
    "Stay read-only: do not create, modify or delete files, and run only commands that change nothing.",
    "Base every answer on what you read or ran; cite files as path:line, and say plainly what you could not verify.",
    "Hand broad investigation to explore_agent when it needs many searches.",
  ],
  tools: { builtins: ["filesystem.read", "search", "shell", "sleep", "doc_converter", "todo"] },
  approval: { default: "auto", overrides: { ...MAIN_APPROVAL } },
  memory: { files: ["AGENTS.md"] },
  sub_agents: { max_total_concurrency: 3, agents: [{ profile: "Explore", tool_name: "explore_agent" }] },
};

const EXPLORE: AgentProfileFile = {
  name: "Explore",
  id: "b011e80e0002",
  display_name: "Explore",
  description: "Read-only investigation: finds where things are and how they work, and reports back.",
  sub_agent_only: true,
  instructions: [
    "You investigate a codebase for another agent and report what you find.",
    "Do not change anything: read files, search, and run only read-only commands.",
    "Answer the question you were given with concrete evidence (paths, line numbers, short excerpts), then stop.",
  ],
  tools: { builtins: ["filesystem.read", "search", "shell", "sleep"], shell_filter: "read_only" },
};

const GENERAL: AgentProfileFile = {
  name: "General",
  id: "b0119e4e0004",
  display_name: "General",
  description: "Self-contained implementation work handed over by another agent.",
  sub_agent_only: true,
  instructions: [
    "You carry out one self-contained task for another agent.",
    "Work only within the scope you were given; read before you change, and check your change where you can.",
    "Finish with a short report: what you changed, how you checked it, and anything left open.",
  ],
  tools: { builtins: ["filesystem.read", "filesystem.write", "search", "shell", "sleep", "todo"] },
};

/** The built-in agents, parsed through the same schema as files. */
export const BUILTIN_AGENTS: readonly (AgentProfileSettings & { id: string })[] = [
  CODE,
  QA,
  EXPLORE,
  GENERAL,
].map((p) => AgentProfileFileSchema.parse(p) as AgentProfileSettings & { id: string });

/** Built-in id by name, for profiles named like a built-in that have no id. */
export function builtinIdFor(name: string): string | null {
  return BUILTIN_AGENTS.find((p) => p.name === name)?.id ?? null;
}
