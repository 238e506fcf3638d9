import type { PrestartedValidation } from "@icode/workflow-engine";
import type { ParsedCommand } from "./command-line/spec";
import type { CliIo } from "./io";

/** What a command gets: its checked command line, the process's streams, and the stop signal. */
export interface CommandContext {
  readonly command: ParsedCommand;
  readonly io: CliIo;
  /** Aborted by the first Ctrl-C, SIGTERM or SIGHUP of a `stoppable` command; the reason is the signal's name. */
  readonly signal: AbortSignal;
  /** For `workflow validate`: the worker started before the command was loaded (see ./prestart). */
  readonly prestarted: PrestartedValidation | null;
}

export interface Command {
  run(context: CommandContext): Promise<number>;
}
