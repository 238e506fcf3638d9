import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import { DISCOVERY_CODE_STAGES, type DiscoveryCode } from "./codes";

/** A diagnostic of this package: the stage follows from the code, `shadowed` is the only warning. */
export function problem(
  code: DiscoveryCode,
  message: string,
  file: string | null,
  hint: string | null,
): Diagnostic {
  return diagnostic({
    severity: code === "shadowed" ? "warning" : "error",
    code,
    stage: DISCOVERY_CODE_STAGES[code],
    message,
    file,
    hint,
  });
}

/** The errno code of a failed `node:fs` call, or `undefined`. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** A short reason for a failed `node:fs` call, e.g. `permission denied (EACCES)`. */
export function describeFsError(error: unknown): string {
  const code = errnoCode(error);
  const known: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    ENOENT: "it no longer exists",
    ENOTDIR: "a part of the path is not a folder",
    ELOOP: "it is a symbolic link",
    EIO: "input/output error",
    EISDIR: "it is a folder",
    EMFILE: "too many open files",
  };
  if (code !== undefined) return `${known[code] ?? "it failed"} (${code})`;
  return error instanceof Error ? error.message : String(error);
}
