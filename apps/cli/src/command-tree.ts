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
  summary: "Export a workflow session's runs, or a pipeline run, for analysis",
  description: `Export a workflow session's runs (--session), or one pipeline run (--run), for analysis:
  json       runs, nodes, attempts, timings and usage
  perfetto   Chrome trace-event JSON that ui.perfetto.dev opens (a track per node, a slice per attempt)`,
  args: [],
  options: [
    { name: "session", value: "ID", summary: "The workflow session ID", completes: "session" },
    {
      name: "run",
      value: "ID",
      summary: "A pipeline run ID instead of a session (see: icode pipeline runs)",
      completes: "pipeline-run",
    },
    { name: "format", value: "F", summary: "json or perfetto", choices: ["json", "perfetto"] },
    {
      name: "out",
      value: "FILE",
      summary: "Where to write the export ('-': standard output)",
      completes: "file",
    },
  ],
  required: ["format", "out"],
  conflicts: [["session", "run"]],
  notes: "Exactly one of --session and --run.",
  bundle: "trajectory-export",
} as const satisfies CommandSpec;

const PIPELINE_ID = {
  name: "pipeline-id",
  summary: "A stored pipeline's ID (see: icode pipeline list), e.g. builtin/review-fan-out",
  completes: "pipeline",
} as const;

const EXPECTED_REVISION = {
  name: "expected-revision",
  value: "N",
  summary: "Refuse the change unless the definition is at revision N (someone else changed it first)",
} as const satisfies OptionSpec;

const PIPELINE_ERRORS = `Errors go to stderr as "icode: <message> [<code>]" and a "help:" line; with --json the error object
is on stdout. Exit codes: 0 done, 1 refused or failed, 2 bad arguments.`;

export const PIPELINE_VALIDATE = {
  path: ["pipeline", "validate"],
  summary: "Check a pipeline's JSON file like a compiler",
  description: `Check a JSON pipeline file as it would be imported, published and run: the JSON and the definition schema,
dependencies (unknown, self, cycles), reuse_session_of, template variables, output schemas, runtimes, and
that every profile and model resolves on this computer. Each problem has its JSON pointer and line:column.
Reports like icode workflow validate, in text or as the same version-1 JSON report; stores nothing.`,
  args: [
    {
      name: "path",
      summary: "The pipeline's .json file, relative to the current directory",
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
  resolve, read, load, graph, bindings (metadata and environment are always skipped)

Exit codes: 0 PASS (warnings allowed), 1 FAIL, 2 bad arguments.`,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_IMPORT = {
  path: ["pipeline", "import"],
  summary: "Store a pipeline's JSON file as a new draft",
  description: `Store a JSON pipeline file as a new user draft at revision 1. The file must fit the definition schema; the
other checks run when it is published. A draft cannot be run: publish it first.`,
  args: [
    {
      name: "file",
      summary: "The pipeline's .json file, relative to the current directory",
      completes: "file",
    },
  ],
  options: [
    {
      name: "id",
      value: "ID",
      summary: "The new definition's ID (lowercase letters, digits, -); default: made from its name",
    },
    JSON_OPTION('Print {"version": 1, "definition": {...}} with the stored definition\'s summary'),
  ],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_EXPORT = {
  path: ["pipeline", "export"],
  summary: "Print a stored pipeline as JSON, importable again",
  description:
    "Print a stored pipeline definition as JSON (2-space indented, every default filled in, no lifecycle fields).",
  args: [PIPELINE_ID],
  options: [
    {
      name: "out",
      value: "PATH",
      summary: "Write it to this file instead ('-', the default: standard output)",
      completes: "file",
    },
  ],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_LIST = {
  path: ["pipeline", "list"],
  summary: "List the stored pipelines",
  description: `List the stored pipeline definitions by ID: your own (drafts and published) and the built-in ones
(builtin/<name>, published and locked: copy one to change it).`,
  args: [],
  options: [
    {
      name: "status",
      value: "STATUS",
      summary: "Only drafts or only published definitions",
      choices: ["draft", "published"],
    },
    JSON_OPTION('Print {"version": 1, "definitions": [{"id", "name", "status", "revision", ...}]}'),
  ],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_SHOW = {
  path: ["pipeline", "show"],
  summary: "Show one stored pipeline: lifecycle and nodes",
  description: "Show one stored pipeline definition: its status, revision, source and lock, and its nodes.",
  args: [PIPELINE_ID],
  options: [JSON_OPTION('Print {"version": 1, "definition": {...}} with the whole stored definition')],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_PUBLISH = {
  path: ["pipeline", "publish"],
  summary: "Make a draft runnable once it passes every check",
  description: `Publish a draft: it must pass every check of icode pipeline validate, profiles and models included; its
revision goes up by one. Publishing a published definition changes nothing. Built-in pipelines are locked.`,
  args: [PIPELINE_ID],
  options: [
    EXPECTED_REVISION,
    JSON_OPTION('Print {"version": 1, "definition": {...}} with the published definition\'s summary'),
  ],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_COPY = {
  path: ["pipeline", "copy"],
  summary: "Copy a pipeline into a new draft you can change",
  description: `Copy a stored pipeline (a locked built-in one, or your own) into a new user draft at revision 1: how a locked
definition is changed.`,
  args: [PIPELINE_ID],
  options: [
    { name: "id", value: "NEW", summary: "The copy's ID; default: made from its name" },
    { name: "name", value: "NAME", summary: "The copy's name; default: the original's with \" (copy)\"" },
    JSON_OPTION('Print {"version": 1, "definition": {...}} with the copy\'s summary'),
  ],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_DELETE = {
  path: ["pipeline", "delete"],
  summary: "Delete one of your stored pipelines",
  description:
    "Delete a user pipeline definition. Built-in pipelines are locked. Runs keep their own snapshot.",
  args: [PIPELINE_ID],
  options: [EXPECTED_REVISION, JSON_OPTION('Print {"version": 1, "id", "deleted": true}')],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

const RUN_ID_ARG = {
  name: "run-id",
  summary: "A pipeline run's ID (see: icode pipeline runs)",
  completes: "pipeline-run",
} as const;
const NODE_ID_ARG = { name: "node-id", summary: "A node of the run (see: icode pipeline inspect)" } as const;

const PIPELINE_RUN_EXITS = `Exit codes: 0 the run succeeded, 1 it failed or was canceled (or the action was refused), 2 bad
arguments, 3 the run is paused and needs a person (the last line says how to continue), 130 interrupted
(143 SIGTERM, 129 SIGHUP): the run is left resumable and the last line says how to continue.`;

export const PIPELINE_RUN = {
  path: ["pipeline", "run"],
  summary: "Start a run of a published pipeline and drive it here",
  description: `Start a run of a published pipeline with the task text and drive it in the foreground until it converges or
pauses, with a progress line per node on stderr. Ctrl-C or SIGTERM stops driving and leaves the run
resumable (icode pipeline resume). A node waiting for approval waits for icode pipeline approve from
another terminal.`,
  args: [PIPELINE_ID],
  options: [
    { name: "input", value: "TEXT", summary: "The task text ({{task}}), at most 20,000 characters" },
    {
      name: "input-file",
      value: "PATH",
      summary: "Read the task text from a UTF-8 file, or from standard input with '-'",
      completes: "file",
    },
    {
      name: "failure-policy",
      value: "P",
      summary: "Override the definition's failure policy for this run",
      choices: ["pause", "fail_fast", "continue"],
    },
    JSON_OPTION('Print {"version": 1, "stop", "run", "nodes"} when it stops, instead of the summary'),
  ],
  conflicts: [["input", "input-file"]],
  notes: PIPELINE_RUN_EXITS,
  bundle: "pipeline-run",
  stoppable: true,
} as const satisfies CommandSpec;

export const PIPELINE_RUNS = {
  path: ["pipeline", "runs"],
  summary: "List pipeline runs, newest first",
  description: "List the pipeline runs of the store, newest first, with their state and definition.",
  args: [],
  options: [JSON_OPTION('Print {"version": 1, "runs": [...]}')],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

export const PIPELINE_INSPECT = {
  path: ["pipeline", "inspect"],
  summary: "Show a pipeline run: node states, attempts, driver",
  description:
    "Show one pipeline run: its state, who drives it, each node's state and attempts, errors and handoff summaries.",
  args: [RUN_ID_ARG],
  options: [JSON_OPTION('Print {"version": 1, "run", "nodes", "lease", "attempts", "commands", "run_dir"}')],
  notes: PIPELINE_ERRORS,
  bundle: "pipeline",
} as const satisfies CommandSpec;

const controlSpec = <const P extends string>(
  name: P,
  summary: string,
  description: string,
  withNode: boolean,
) =>
  ({
    path: ["pipeline", name],
    summary,
    description,
    args: withNode ? [RUN_ID_ARG, NODE_ID_ARG] : [RUN_ID_ARG],
    options: [JSON_OPTION('Print {"version": 1, "action", "result", "via", "run"} instead of text')],
    notes: PIPELINE_RUN_EXITS,
    bundle: "pipeline-run",
    stoppable: true,
  }) as const;

const DRIVES =
  "When no process drives the run, this one then drives it in the foreground, as icode pipeline run does.";

const PIPELINE_APPROVE = controlSpec(
  "approve",
  "Let a node waiting for approval start",
  `Approve a node's requires_approval gate (waiting_approval → ready). ${DRIVES}`,
  true,
);
const PIPELINE_RETRY = controlSpec(
  "retry",
  "Run a failed, blocked or canceled node again",
  `Retry a failed, blocked or canceled node (→ pending; a paused or failed run continues). ${DRIVES}`,
  true,
);
export const PIPELINE_SKIP = {
  ...controlSpec(
    "skip",
    "Skip a node; the note becomes its handoff summary",
    'Skip a node: it succeeds with the handoff {"summary": NOTE, "skipped": true}, and the nodes below it proceed.',
    true,
  ),
  options: [
    { name: "note", value: "TEXT", summary: 'The skipped node\'s handoff summary (default "skipped")' },
    JSON_OPTION('Print {"version": 1, "action", "result", "via", "run"} instead of text'),
  ],
} as const satisfies CommandSpec;
const PIPELINE_PAUSE = controlSpec(
  "pause",
  "Pause a run: nothing more starts",
  "Pause a run: no node starts any more; nodes already running finish and are recorded.",
  false,
);
const PIPELINE_RESUME = controlSpec("resume", "Resume a paused run", `Resume a paused run. ${DRIVES}`, false);
const PIPELINE_CANCEL = controlSpec(
  "cancel",
  "Cancel a run and its running nodes",
  "Cancel a run: running nodes are aborted, nodes not started are canceled.",
  false,
);
const PIPELINE_STOP_SESSIONS = controlSpec(
  "stop-sessions",
  "End the agent sessions a finished run left open",
  "After a run has finished, gracefully stop the agent sessions its nodes created.",
  false,
);
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
    {
      name: "pipeline",
      summary: "Manage JSON agent pipelines.",
      commands: [
        PIPELINE_LIST,
        PIPELINE_SHOW,
        PIPELINE_VALIDATE,
        PIPELINE_IMPORT,
        PIPELINE_EXPORT,
        PIPELINE_PUBLISH,
        PIPELINE_COPY,
        PIPELINE_DELETE,
        PIPELINE_RUN,
        PIPELINE_RUNS,
        PIPELINE_INSPECT,
        PIPELINE_APPROVE,
        PIPELINE_RETRY,
        PIPELINE_SKIP,
        PIPELINE_PAUSE,
        PIPELINE_RESUME,
        PIPELINE_CANCEL,
        PIPELINE_STOP_SESSIONS,
      ],
    },
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
