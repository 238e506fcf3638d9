import type { WorkerWarning } from "@icode/workflow-engine";
import type { CliIo } from "./io";
import { oneLine } from "./render/flatten";

/** For the engine's `onWarning`: what it recovered from on its own, as `warning: … [code]` on stderr. */
export function warnOn(io: CliIo): (warning: WorkerWarning) => void {
  return (warning) => io.stderr.write(`warning: ${oneLine(warning.message)} [${warning.code}]\n`);
}
