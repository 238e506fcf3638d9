// First: zod settles how it parses before any schema is built (see ../zod-jitless).
import "../zod-jitless";
import { validateWorkflowFor } from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import type { ValuesOf, WORKFLOW_VALIDATE } from "../command-tree";
import { EXIT, exitCodeOfSignal, stopSignalOf } from "../exit-codes";
import { renderValidateText } from "../render/validate-text";
import { loadTimeoutMs } from "../settings";
import { warnOn } from "../warnings";

export const command = {
  async run({ command: parsed, io, signal, prestarted }: CommandContext): Promise<number> {
    const values = parsed.values as ValuesOf<typeof WORKFLOW_VALIDATE>;
    const loadTimeout = loadTimeoutMs(io.env);
    // `validateWorkflowFor` rather than `createEngine().validate()`: the same check, without loading the run
    // machinery (scheduler, records, hooks) that a one-shot `validate` never uses.
    const report = await validateWorkflowFor(
      parsed.args[0]!,
      { cwd: io.cwd, env: io.env, onWarning: warnOn(io) },
      {
        signal,
        ...(loadTimeout === null ? {} : { loadTimeoutMs: loadTimeout }),
        ...(prestarted === null ? {} : { prestarted }),
      },
    );
    if (signal.aborted) return exitCodeOfSignal(stopSignalOf(signal));
    if (values.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    else if (!(values.quiet && report.status === "pass")) io.stdout.write(renderValidateText(report, io.cwd));
    return report.status === "pass" ? EXIT.ok : EXIT.failed;
  },
};
