import { type PrestartedValidation, prestartValidation } from "@icode/workflow-engine";
import type { CliIo } from "./io";

/**
 * For `icode workflow validate <path> [--json]`: starts the Python worker the validation will want before the
 * command's bundle is loaded, so that Python starts while Node compiles the engine (see the engine's
 * `prestartValidation`). Anything else (help, a usage error to come) starts nothing.
 */
export function prestartValidate(argv: readonly string[], io: CliIo): PrestartedValidation | null {
  const options = argv.filter((arg) => arg.startsWith("-"));
  if (argv.length - options.length !== 1 || options.some((option) => option !== "--json")) return null;
  return prestartValidation({ cwd: io.cwd, env: io.env });
}
