const MARK = Symbol.for("icode.cli.usage-error");

/** A usage error found by a command (exit 2): printed like the parser's own (see main.ts). */
export class UsageError extends Error {
  readonly [MARK] = true;
  /** Shown under the message (`shortUsage`). */
  readonly usage: string;
  /** The command that shows the full help (`icode workflow run --help`). */
  readonly help: string;
  constructor(message: string, usage: string, help: string) {
    super(message);
    this.name = "UsageError";
    this.usage = usage;
    this.help = help;
  }
}

/**
 * Recognises a `UsageError` by its marker, not `instanceof`: each command is bundled on its own with its own
 * copy of this class, and `main` catches what any of them throws.
 */
export function isUsageError(value: unknown): value is UsageError {
  return typeof value === "object" && value !== null && (value as { [MARK]?: unknown })[MARK] === true;
}
