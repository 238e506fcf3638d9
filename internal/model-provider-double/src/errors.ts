import { isWorkflowError, WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";

/** Why the provider double refused an operation; thrown as `ProviderDoubleError`, never sent on the wire. */
export const PROVIDER_DOUBLE_CODES = [
  "invalid_reply",
  "invalid_options",
  "invalid_script_file",
  "invalid_arguments",
  "listen_failed",
  "closed",
] as const;
export const ProviderDoubleCodeSchema = z.enum(PROVIDER_DOUBLE_CODES);
export type ProviderDoubleCode = z.infer<typeof ProviderDoubleCodeSchema>;

/** A misuse of the double by a test or benchmark (a malformed reply, a bad script file, a closed server). */
export class ProviderDoubleError extends WorkflowError<ProviderDoubleCode> {
  constructor(code: ProviderDoubleCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(code, message, options);
    this.name = "ProviderDoubleError";
  }
}

/** One line per zod issue, `path: message`, for error messages that say what was found. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}

/** True for a `ProviderDoubleError` from any copy of this package (by the shared marker, not `instanceof`). */
export function isProviderDoubleError(value: unknown): value is ProviderDoubleError {
  return isWorkflowError(value) && value.name === "ProviderDoubleError";
}
