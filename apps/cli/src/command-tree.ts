import type { CommandSpec, CommandTree, OptionSpec } from "./command-line/spec";

/**
 * Every `icode` command as data: what `--help`, parsing, suggestions, `icode completion` and the docs check
 * (test/docs.int.test.ts) read. The commands themselves live in `commands/*.ts`, each in a bundle of its own.
 */

const JSON_OPTION = (summary: string): OptionSpec => ({ name: "json", summary });

export const WORKFLOW_LIST = {
  path: ["workflow", "list"],
  summary: "List the workflows found from this folder",
  description: `List the workflows found from the current directory without running any workflow code:
project workflows in ./.chrys/workflows/, global ones in $CHRYS_HOME/workflows/ (default ~/.chrys), and the
built-in ones. When several share an ID, the first readable one in priority order wins (project folder,
project file, global folder, global file, built-in). Titles of custom workflows come from saved trust
confirmations ("-" until a workflow was trusted).`,
  args: [],
  options: [JSON_OPTION('Print {"workflows": [{"id", "source", "layout", "title", "path"}]}')],
  notes: "Warnings about skipped workflows go to stderr.",
  bundle: "workflow-list",
} as const satisfies CommandSpec;

export const WORKFLOW_VALIDATE = {
  path: ["workflow", "validate"],
  summary: "Check a workflow file or folder like a compiler",
  description: `Check a workflow before running it: load it as a run would and report each problem with its file, line and
column, like a compiler. Runs the workflow's top-level code, but no node, and calls no model. Does not ask
for or record trust.`,
  args: [
    {
      name: "path",
      summary:
        "A workflow .py file or workflow folder, relative to the current directory.\n" +
        "For a folder, code-review, code-review/ and code-review/code-review.py all check the folder.",
      completes: "file",
    },
  ],
  options: [
    JSON_OPTION("Print the version-1 JSON report instead of text (both go to stdout)"),
    {
      name: "quiet",
      short: "q",
      summary: "Print nothing when it passes (a failure still prints the report)",
    },
  ],
  notes: `Stages, in order, stopping at the first that fails:
  resolve, read, metadata, environment, load, graph, bindings

Exit codes: 0 PASS (warnings allowed), 1 FAIL, 2 bad arguments, 130 interrupted (143 SIGTERM, 129 SIGHUP).`,
  bundle: "workflow-validate",
  stoppable: true,
} as const satisfies CommandSpec;

export const WORKFLOW_RUN = {
  path: ["workflow", "run"],
  summary: "Run a workflow and print its outputs",
  description: "Run a workflow and print its outputs when it finishes.",
  args: [
    {
      name: "workflow-id",
      summary: "The file name without .py, or a workflow folder's name (see: icode workflow list)",
      completes: "workflow",
    },
  ],
  options: [
    {
      name: "input",
      value: "TEXT",
      summary:
        "The start node's input text (default \"\"), whatever it starts with. Multi-line in bash: --input $'a\\nb'",
    },
    {
      name: "input-file",
      value: "PATH",
      summary: "Read the input text from a UTF-8 file, or from standard input with '-'",
      completes: "file",
    },
    {
      name: "session",
      short: "s",
      value: "ID",
      summary: "Start a new run in this existing workflow session (same workflow ID)",
      completes: "session",
    },
    {
      name: "model",
      value: "ID",
      summary:
        "The default model of the new session (a model profile id or name, see: icode models), saved with it;\n" +
        "agent nodes without model= whose profile binds none use it. Not with -s",
    },
    { name: "trust", summary: "Trust the workflow's current source and environment (custom workflows)" },
    {
      name: "timeout",
      value: "SECONDS",
      summary: "Overall limit for preview, loading and running; a finite positive number",
    },
    JSON_OPTION("Print one JSON line with the result instead of text"),
    {
      name: "quiet",
      short: "q",
      summary: "No progress on stderr (warnings, errors and load output still show)",
    },
    {
      name: "interactive",
      summary: "Answer the workflow's questions (ctx.ask) on this terminal",
    },
  ],
  conflicts: [["input", "input-file"]],
  notes: `Outputs go to stdout in declaration order, separated by a blank line; progress goes to stderr.
Without --interactive a question fails its node with ask_unavailable, as the reference says.
Exit codes: 0 completed, 1 failed or rejected, 2 bad arguments, 124 timed out, 130 interrupted (Ctrl-C),
143 terminated (SIGTERM), 129 hung up (SIGHUP).`,
  bundle: "workflow-run",
  stoppable: true,
} as const satisfies CommandSpec;

export const RUNS_LIST = {
  path: ["runs", "list"],
  summary: "List recorded runs, newest first",
  description: "List the recorded workflow runs of every session, or of one, newest first.",
  args: [],
  options: [
    {
      name: "session",
      short: "s",
      value: "ID",
      summary: "Only the runs of this workflow session",
      completes: "session",
    },
    JSON_OPTION('Print {"version": 1, "runs": [...]}'),
  ],
  bundle: "history",
} as const satisfies CommandSpec;

export const RUNS_SHOW = {
  path: ["runs", "show"],
  summary: "Show one run: nodes, attempts, outcome, errors",
  description:
    "Show one recorded run: its outcome, its nodes and their attempts, every failure with its traceback, and its folder.",
  args: [{ name: "run-id", summary: "The run ID (see: icode runs list)", completes: "run" }],
  options: [JSON_OPTION('Print {"version": 1, "run", "inspection", "failures", ...}')],
  bundle: "history",
} as const satisfies CommandSpec;

export const RUNS_LOGS = {
  path: ["runs", "logs"],
  summary: "Show what a run's nodes printed and emitted",
  description:
    "Show what a recorded run's nodes printed (print() in a node) and emitted (ctx.emit()), in order.",
  args: [{ name: "run-id", summary: "The run ID (see: icode runs list)", completes: "run" }],
  options: [
    { name: "node", value: "ID", summary: "Only this node's output" },
    JSON_OPTION('Print {"version": 1, "run_id", "captured", "emits"}'),
  ],
  bundle: "history",
} as const satisfies CommandSpec;

export const SESSIONS_LIST = {
  path: ["sessions", "list"],
  summary: "List workflow sessions, most recently used first",
  description: "List the recorded workflow sessions, most recently used first.",
  args: [],
  options: [JSON_OPTION('Print {"version": 1, "sessions": [...]}')],
  bundle: "history",
} as const satisfies CommandSpec;

export const TRAJECTORY_EXPORT = {
  path: ["trajectory", "export"],
  summary: "Export a workflow session's runs for analysis",
  description: `Export a workflow session's runs for analysis:
  json       runs, nodes, attempts, timings and usage
  perfetto   Chrome trace-event JSON that ui.perfetto.dev opens (a track per node, a slice per attempt)`,
  args: [],
  options: [
    { name: "session", value: "ID", summary: "The workflow session ID", completes: "session" },
    { name: "format", value: "F", summary: "json or perfetto", choices: ["json", "perfetto"] },
    {
      name: "out",
      value: "FILE",
      summary: "Where to write the export ('-': standard output)",
      completes: "file",
    },
  ],
  required: ["session", "format", "out"],
  bundle: "trajectory-export",
} as const satisfies CommandSpec;

const LISTING_NOTES = (
  empty: string,
) => `Text goes to stdout; each problem of a profile or settings file goes to stderr as
  Warning: <file>:<line>: <field>: <message>
(line and field are left out when unknown); with --json problems are only in "problems". Empty cells show '-'. ${empty}
Exit codes: 0 listed (warnings allowed), 1 the working directory no longer exists, 2 bad arguments.`;

export const AGENTS_LIST = {
  path: ["agents", "list"],
  summary: "List the agent profiles agent nodes can use",
  description: `List the effective agent profiles, one per name after hiding (project ./.chrys/agents/ over user
$CHRYS_HOME/agents/ over built-in), sub-agent-only and ACP ones included, sorted by name ignoring case.
Columns: Default (* on the default agent), Name, Display Name, ID, Model (active, the bound model profile's
name, missing:<id>, acp or acp:<model_id>), Source (builtin, user, project), Description.
'icode agents' is this command. Loading puts user profile files into canonical form, as every start does.`,
  args: [],
  options: [
    JSON_OPTION(
      'Print {"agents": [{"id", "name", "displayName", "description", "default", "model", "source", "file", "kind", "subAgentOnly", "launchableAsMain"}], "default", "problems"}',
    ),
  ],
  notes: LISTING_NOTES("No profile at all prints: No agent profiles found."),
  bundle: "profiles",
} as const satisfies CommandSpec;

export const MODELS_LIST = {
  path: ["models", "list"],
  summary: "List the model profiles agents can use",
  description: `List every model profile in $CHRYS_HOME/models/, sorted by name ignoring case, then id.
Columns: Active (* on the profile model.profile.active resolves to), ID, Name, Provider, API (chat or
responses), Model (model_id), Context (200k, 1m, else in full), Flags (stream, vision).
'icode models' is this command. API keys are never shown.`,
  args: [],
  options: [
    JSON_OPTION(
      'Print {"models": [{"id", "name", "provider", "apiStyle", "modelId", "baseUrl", "maxContextTokens", "maxOutputTokens", "stream", "vision", "usable", "active", "file"}], "active", "problems"}',
    ),
  ],
  notes: LISTING_NOTES("No profile at all prints: No model profiles found."),
  bundle: "profiles",
} as const satisfies CommandSpec;

const COMPLETION = {
  path: ["completion"],
  summary: "Print a shell completion script",
  description: `Print a script that completes icode's commands, options, workflow IDs, sessions and runs.
  bash   add to ~/.bashrc:                 source <(icode completion bash)
  zsh    add to ~/.zshrc:                  source <(icode completion zsh)
  fish   save it:  icode completion fish > ~/.config/fish/completions/icode.fish`,
  args: [{ name: "shell", summary: "bash, zsh or fish", choices: ["bash", "zsh", "fish"] }],
  options: [],
  bundle: "completion",
} as const satisfies CommandSpec;

export const TREE: CommandTree = {
  program: "icode",
  summary: "run and check iCode workflows",
  groups: [
    {
      name: "workflow",
      summary: "List, check and run workflows.",
      commands: [WORKFLOW_LIST, WORKFLOW_VALIDATE, WORKFLOW_RUN],
    },
    { name: "runs", summary: "Look at recorded runs.", commands: [RUNS_LIST, RUNS_SHOW, RUNS_LOGS] },
    { name: "sessions", summary: "Look at recorded workflow sessions.", commands: [SESSIONS_LIST] },
    { name: "trajectory", summary: "Export recorded runs for analysis.", commands: [TRAJECTORY_EXPORT] },
    {
      name: "agents",
      summary: "List agent profiles ('icode agents' lists them).",
      commands: [AGENTS_LIST],
      default: "list",
    },
    {
      name: "models",
      summary: "List model profiles ('icode models' lists them).",
      commands: [MODELS_LIST],
      default: "list",
    },
  ],
  commands: [COMPLETION],
  footer:
    "Configuration lives in $CHRYS_HOME (default ~/.chrys). See docs/cli.md and the workflow reference.",
};

/** The parsed options of one command of the tree, typed by its spec. */
export type ValuesOf<S extends CommandSpec> = {
  readonly [O in S["options"][number] as O["name"]]: O extends { value: string }
    ? string | undefined
    : boolean;
};
