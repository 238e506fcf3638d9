const MARK = Symbol.for("icode.error");

/**
 * A failed operation (a dead worker, a failed write), thrown and caught at the scheduler or engine edge.
 * Identity is checked with `isWorkflowError`, not `instanceof`, because a facade and its parts may load
 * as two copies of this package.
 */
export class WorkflowError<Code extends string = string> extends Error {
  readonly [MARK] = true;
  readonly code: Code;
  readonly hint: string | undefined;

  constructor(code: Code, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WorkflowError";
    this.code = code;
    this.hint = options.hint;
  }
}

export function isWorkflowError(value: unknown): value is WorkflowError {
  return typeof value === "object" && value !== null && (value as { [MARK]?: unknown })[MARK] === true;
}
