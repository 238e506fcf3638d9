/**
 * The shapes of the command tree (`../command-tree.ts`): every command, its arguments and options, written
 * once as data. Parsing, help, suggestions, shell completion and the docs check all read this one tree.
 * Plain types without imports: `dist/bin.js` holds the tree, and must stay small to start fast.
 */

/** What a shell completes for an argument or an option's value. */
export type Completes = "workflow" | "pipeline" | "pipeline-run" | "file" | "session" | "run" | "none";

export interface OptionSpec {
  /** The long name without dashes: `input` for `--input`. */
  readonly name: string;
  /** One letter: `s` for `-s`. */
  readonly short?: string;
  /** Present when the option takes a value: its placeholder in help (`TEXT`). Absent: a flag. */
  readonly value?: string;
  readonly summary: string;
  /** The only values it accepts (also what a shell completes). */
  readonly choices?: readonly string[];
  readonly completes?: Completes;
}

export interface ArgumentSpec {
  /** Shown as `<name>`. */
  readonly name: string;
  readonly summary: string;
  readonly choices?: readonly string[];
  readonly completes?: Completes;
}

/** Which bundle runs a command (`dist/<bundle>.js`, see tsup.config.ts and ../load-command.ts). */
export type BundleName =
  | "workflow-list"
  | "workflow-validate"
  | "workflow-run"
  | "trajectory-export"
  | "history"
  | "pipeline"
  | "pipeline-run"
  | "completion"
  | "profiles";

export interface CommandSpec {
  /** `["workflow", "run"]`, or `["completion"]` for a command outside a group. */
  readonly path: readonly string[];
  readonly summary: string;
  /** The paragraph under the usage line of `--help`. */
  readonly description: string;
  /** Every argument is required, and there are exactly this many. */
  readonly args: readonly ArgumentSpec[];
  /** The options besides `-h`/`--help`, which every command has. */
  readonly options: readonly OptionSpec[];
  /** Options that must be given (their long names). */
  readonly required?: readonly string[];
  /** Pairs of options (long names) that cannot be given together. */
  readonly conflicts?: readonly (readonly [string, string])[];
  /** Text after the options in `--help` (output, exit codes). */
  readonly notes?: string;
  readonly bundle: BundleName;
  /** Whether the command stops cleanly on Ctrl-C, SIGTERM and SIGHUP (else the signal ends the process). */
  readonly stoppable?: boolean;
}

export interface GroupSpec {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly CommandSpec[];
  /**
   * The command the group runs when no command follows its name, or only options do (`icode agents` and
   * `icode agents --json` are `icode agents list`). Without one, the group's name alone shows its help.
   */
  readonly default?: string;
}

export interface CommandTree {
  readonly program: string;
  readonly summary: string;
  readonly groups: readonly GroupSpec[];
  /** Commands outside a group (`icode completion`). */
  readonly commands: readonly CommandSpec[];
  /** The closing paragraph of `icode --help`. */
  readonly footer: string;
}

/** The parsed options of a command: a string (or `undefined`) for each option with a value, else a boolean. */
export type OptionValues = Record<string, string | boolean | undefined>;

/** What a command receives once its command line is checked. */
export interface ParsedCommand {
  readonly spec: CommandSpec;
  readonly values: OptionValues;
  /** The arguments, as many as `spec.args`. */
  readonly args: readonly string[];
  /** For each argument, whether it came after `--` (so it may start with `-`). */
  readonly afterSeparator: readonly boolean[];
}
