import { z } from "zod";

/** Codes of a `SchedulerError`: a run that cannot start, or a defect of the scheduler itself. */
export const SCHEDULER_ERROR_CODES = [
  "definition_invalid",
  "executor_missing",
  "options_invalid",
  "internal_error",
] as const;
const SchedulerErrorCodeSchema = z.enum(SCHEDULER_ERROR_CODES);
export type SchedulerErrorCode = z.infer<typeof SchedulerErrorCodeSchema>;

const MARK = Symbol.for("icode.error");

/**
 * Thrown by `startRun` when it cannot start (an invalid Definition, a missing executor, bad options), and
 * the rejection of `run.result` if the scheduler itself breaks. Carries the shared `icode.error` marker, so
 * `isWorkflowError` from `@icode/workflow-errors` recognizes it.
 */
export class SchedulerError extends Error {
  readonly [MARK] = true;
  readonly code: SchedulerErrorCode;
  readonly hint: string | undefined;

  constructor(code: SchedulerErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SchedulerError";
    this.code = code;
    this.hint = options.hint;
  }
}

export function isSchedulerError(value: unknown): value is SchedulerError {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [MARK]?: unknown })[MARK] === true &&
    (value as { name?: unknown }).name === "SchedulerError"
  );
}
