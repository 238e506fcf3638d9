import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import { failingClauses, formatClause } from "./requires-python";
import type { InterpreterOrigin, MetadataSites, PythonVersion, ScriptMetadata } from "./schema";

/** The oldest Python iCode supports. */
export const MIN_PYTHON_VERSION = [3, 9] as const;

export interface EnvironmentCheckContext {
  /** The workflow file for diagnostics when `sites` is not given. */
  file?: string | null;
  /** From `parseScriptMetadata`, so a `requires-python` mismatch points at that line. */
  sites?: MetadataSites | null;
  /** How the interpreter was chosen (`ResolvedInterpreter.origin`), to suggest the right fix. */
  origin?: InterpreterOrigin;
}

/**
 * Checks a started interpreter against iCode's minimum (3.9) and the workflow's `requires-python`.
 * Returns `environment_invalid` diagnostics (stage `environment`); empty when the interpreter can be used.
 *
 * @param metadata the workflow's declaration (`null` or empty when it has no block: only the minimum applies).
 * @param interpreter at least `version_info` (`[major, minor, micro, …]`, as `sys.version_info`; an
 *   `InterpreterInfo` from `probeInterpreter` fits); `executable` names the interpreter in messages.
 * @param context where the metadata was declared and how the interpreter was chosen; a string is the file.
 */
export function checkEnvironment(
  metadata: ScriptMetadata | null,
  interpreter: { version_info: readonly number[]; executable?: string | null },
  context: EnvironmentCheckContext | string = {},
): Diagnostic[] {
  if (typeof context === "string") return checkEnvironment(metadata, interpreter, { file: context });
  const diagnostics: Diagnostic[] = [];
  const versionInfo: PythonVersion = [
    interpreter.version_info[0] ?? 0,
    interpreter.version_info[1] ?? 0,
    interpreter.version_info[2] ?? 0,
  ];
  const version = versionInfo.join(".");
  const which = `Python ${version}${interpreter.executable ? ` (${interpreter.executable})` : ""}`;
  const fix = fixFor(context.origin);
  const file = context.sites?.file ?? context.file ?? null;

  const [major, minor] = versionInfo;
  if (major < MIN_PYTHON_VERSION[0] || (major === MIN_PYTHON_VERSION[0] && minor < MIN_PYTHON_VERSION[1])) {
    diagnostics.push(
      diagnostic({
        code: "environment_invalid",
        stage: "environment",
        message: `${which} is too old: iCode supports Python ${MIN_PYTHON_VERSION.join(".")} and later`,
        hint: fix,
        file,
        ...(context.sites?.python ?? {}),
      }),
    );
  }

  const requires = metadata?.requires_python ?? null;
  if (requires !== null) {
    const failing = failingClauses(requires, versionInfo);
    if (failing.length > 0) {
      diagnostics.push(
        diagnostic({
          code: "environment_invalid",
          stage: "environment",
          message: `${which} does not satisfy requires-python ${JSON.stringify(requires.specifier)}: it fails ${failing
            .map((clause) => JSON.stringify(formatClause(clause)))
            .join(" and ")}; iCode does not look for or install another version`,
          hint: `${fix}, or change requires-python`,
          file,
          ...(context.sites?.requires_python ?? {}),
        }),
      );
    }
  }
  return diagnostics;
}

function fixFor(origin: InterpreterOrigin | undefined): string {
  switch (origin) {
    case "tool.chrys.python":
      return "point [tool.chrys] python at an environment with a matching Python";
    case "ICODE_PYTHON":
      return "set ICODE_PYTHON to a matching Python, or point [tool.chrys] python at an environment with one";
    case "PATH":
      return "put a matching python3 first on PATH, set ICODE_PYTHON to one, or point [tool.chrys] python at an environment with one";
    default:
      return "select a matching Python with [tool.chrys] python (or ICODE_PYTHON for the default interpreter)";
  }
}
