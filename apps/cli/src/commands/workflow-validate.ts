// First: zod settles how it parses before any schema is built (see ../zod-jitless).
import "../zod-jitless";
import { type PrestartedValidation, validateWorkflowFor } from "@icode/workflow-engine";
import { parse } from "../args";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import { renderValidateText } from "../render/validate-text";
import { loadTimeoutMs } from "../settings";
import { UsageError } from "../usage";
import { warnOn } from "../warnings";

export const USAGE = `Usage: icode workflow validate <path> [--json]

Check a workflow before running it: load it as a run would and report each problem with its file, line and
column, like a compiler. Runs the workflow's top-level code, but no node, and calls no model. Does not ask
for or record trust.

Arguments:
  <path>      A workflow .py file or workflow folder, relative to the current directory.
              For a folder, code-review, code-review/ and code-review/code-review.py all check the folder.

Options:
  --json      Print the version-1 JSON report instead of text (both go to stdout)
  -h, --help  Show this help

Stages, in order, stopping at the first that fails:
  resolve, read, metadata, environment, load, graph, bindings

Exit codes: 0 PASS (warnings allowed), 1 FAIL, 2 bad arguments, 130 interrupted.
`;

export const command = {
  async run(
    argv: string[],
    io: CliIo,
    signal: AbortSignal,
    prestarted?: PrestartedValidation | null,
  ): Promise<number> {
    const { values, positionals } = parse(
      argv,
      { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      USAGE,
    );
    if (values.help) {
      io.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length !== 1) {
      throw new UsageError(
        positionals.length === 0 ? "missing <path>" : `expected one <path>, got ${positionals.length}`,
        USAGE,
      );
    }
    const loadTimeout = loadTimeoutMs(io.env);
    // `validateWorkflowFor` rather than `createEngine().validate()`: the same check, without loading the run
    // machinery (scheduler, records, hooks) that a one-shot `validate` never uses.
    const report = await validateWorkflowFor(
      positionals[0]!,
      { cwd: io.cwd, env: io.env, onWarning: warnOn(io) },
      {
        signal,
        ...(loadTimeout === null ? {} : { loadTimeoutMs: loadTimeout }),
        ...(prestarted == null ? {} : { prestarted }),
      },
    );
    if (signal.aborted) return EXIT.interrupted;
    io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : renderValidateText(report, io.cwd));
    return report.status === "pass" ? EXIT.ok : EXIT.failed;
  },
};
