import { type PrestartedValidation, prestartValidation } from "@icode/workflow-engine";
import type { CliIo } from "./io";

/**
 * For `icode workflow validate`, once its command line is known to be good: starts the Python worker the
 * validation will want before the command's bundle is loaded, so that Python starts while Node compiles the
 * engine (see the engine's `prestartValidation`). Help and usage errors never get here, so start nothing.
 */
export function prestartValidate(io: CliIo): PrestartedValidation | null {
  return prestartValidation({ cwd: io.cwd, env: io.env });
}
