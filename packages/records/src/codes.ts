import { WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";

/**
 * The codes of a failed records operation, thrown as `WorkflowError`s. `storage_failed` is also the spec's run
 * outcome: the scheduler turns a sink that throws it into `outcome: "storage_failed"`.
 */
export const RECORDS_CODES = [
  /** A record could not be written (or its folder created): disk full, permissions, a path that is a file. */
  "storage_failed",
  /** No session with that ID under `<chrysHome>/sessions/`. */
  "session_not_found",
  /** A session or run file exists but is not valid JSON of the expected shape. */
  "record_invalid",
  /** An ID does not have the expected form (session: lowercase UUID v4; run: 32 lowercase hex). */
  "invalid_id",
  /** The session has runs, so its workspace and workflow are fixed (spec "Session settings"). */
  "session_fixed",
  /** No run with that ID in the session. */
  "run_not_found",
  /** A run with that ID already exists in the session. */
  "run_exists",
  /** `<chrysHome>/hooks.json` is not valid JSON or does not match the hooks schema. */
  "hooks_config_invalid",
] as const;
export const RecordsCodeSchema = z.enum(RECORDS_CODES);
export type RecordsCode = z.infer<typeof RecordsCodeSchema>;

export type RecordsError = WorkflowError<RecordsCode>;

export function recordsError(
  code: RecordsCode,
  message: string,
  options: { hint?: string; cause?: unknown } = {},
): RecordsError {
  return new WorkflowError(code, message, options);
}

/** `ENOSPC: no space left on device` → `ENOSPC (no space left on device)`, for messages. */
export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code === undefined ? cause.message : `${code}: ${cause.message.replace(/^[A-Z]+: /, "")}`;
  }
  return String(cause);
}

/** A `storage_failed` error naming what could not be written, where, and why. */
export function storageFailed(what: string, path: string, cause: unknown): RecordsError {
  return recordsError("storage_failed", `Could not write ${what} at ${path}: ${describeCause(cause)}.`, {
    hint: "Check that the folder exists, is a folder, is writable and that the disk has free space.",
    cause,
  });
}
