const MARK = Symbol.for("icode.cli.usage-error");

/** A usage error: printed to stderr as text in every mode, exit code 2. */
export class UsageError extends Error {
  readonly [MARK] = true;
  readonly usage: string;
  constructor(message: string, usage: string) {
    super(message);
    this.name = "UsageError";
    this.usage = usage;
  }
}

/**
 * Recognises a `UsageError` by its marker, not `instanceof`: each command is bundled on its own with its own
 * copy of this class, and `main` catches what any of them throws.
 */
export function isUsageError(value: unknown): value is UsageError {
  return typeof value === "object" && value !== null && (value as { [MARK]?: unknown })[MARK] === true;
}
