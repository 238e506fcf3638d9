import { createEngine, type EngineEvent, type FinishedRun, type RunReport } from "@icode/workflow-engine";
import { parse } from "../args";
import { EXIT } from "../exit-codes";
import type { CliIo } from "../io";
import { oneLine } from "../render/flatten";
import { ProgressLines } from "../render/progress";
import { renderDiagnostic } from "../render/validate-text";
import { loadTimeoutMs } from "../settings";
import { UsageError } from "../usage";
import { warnOn } from "../warnings";

export const USAGE = `Usage: icode workflow run <workflow-id> [--input TEXT] [-s SESSION] [--trust] [--timeout SECONDS] [--json] [-q]

Run a workflow and print its outputs when it finishes.

Arguments:
  <workflow-id>        The file name without .py, or a workflow folder's name (see: icode workflow list)

Options:
  --input TEXT         The start node's input text (default ""). Multi-line in bash: --input $'a\\nb'
  -s, --session ID     Start a new run in this existing workflow session (same workflow ID)
  --trust              Trust the workflow's current source and environment (custom workflows)
  --timeout SECONDS    Overall limit for preview, loading and running; a finite positive number
  --json               Print one JSON line with the result instead of text
  -q, --quiet          No progress on stderr (warnings, errors and load output still show)
  -h, --help           Show this help

Outputs go to stdout in declaration order, separated by a blank line; progress goes to stderr.
Exit codes: 0 completed, 1 failed or rejected, 2 bad arguments, 124 timed out, 130 interrupted.
`;

function parseTimeout(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(`--timeout must be a finite positive number of seconds, got '${raw}'`, USAGE);
  }
  return value;
}

/**
 * What to do next, in the CLI's own words: the engine's hints name no command, so the commands a user can
 * paste are added here by code.
 */
function cliHint(report: Extract<RunReport, { status: "rejected" }>, workflowId: string): string | null {
  switch (report.code) {
    case "workflow_not_found":
      return "list workflows with: icode workflow list";
    case "trust_required":
      return `review the source, then run again with --trust: icode workflow run ${workflowId} --trust`;
    case "session_not_found":
      return "list sessions in the configuration directory's sessions/ folder, or run without -s";
    default:
      return report.hint;
  }
}

/** The `--json` result: exactly the spec's top-level fields. */
function resultJson(run: FinishedRun, duration: number) {
  return {
    session_id: run.session_id,
    run_id: run.run_id,
    outcome: run.outcome,
    reason: run.reason,
    node_id: run.node_id,
    error: run.error,
    duration,
    diagnostics: run.diagnostics,
    outputs: run.outputs.map((o) => ({
      node_id: o.node_id,
      activation_id: o.activation_id,
      text: o.text,
      data: o.data,
    })),
  };
}

function exitCodeOf(report: RunReport, interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  if (report.status === "rejected") {
    if (report.code === "deadline_exceeded") return EXIT.timeout;
    if (report.code === "interrupted") return EXIT.interrupted;
    return EXIT.failed;
  }
  if (report.outcome === "completed") return EXIT.ok;
  if (report.outcome === "cancelled" && report.reason === "deadline_exceeded") return EXIT.timeout;
  if (report.outcome === "cancelled" && report.reason === "interrupted") return EXIT.interrupted;
  return EXIT.failed;
}

function failureText(run: FinishedRun): string {
  switch (run.outcome) {
    case "cancelled":
      return run.reason === "deadline_exceeded"
        ? "Workflow timed out (--timeout)"
        : `Workflow cancelled (${run.reason})`;
    case "node_failed":
      return `Workflow failed: node '${run.node_id}' failed: ${run.error}`;
    case "loop_exhausted":
      return `Workflow failed: loop '${run.node_id}' ran out of iterations: ${run.error}`;
    case "worker_lost":
      return `Workflow failed: the Python worker was lost: ${run.error}`;
    case "storage_failed":
      return `Workflow failed: the run records could not be written: ${run.error}`;
    default:
      return `Workflow ended: ${run.outcome}${run.error === "" ? "" : `: ${run.error}`}`;
  }
}

export const command = {
  async run(argv: string[], io: CliIo, signal: AbortSignal): Promise<number> {
    const started = performance.now();
    const { values, positionals } = parse(
      argv,
      {
        input: { type: "string" },
        session: { type: "string", short: "s" },
        trust: { type: "boolean" },
        timeout: { type: "string" },
        json: { type: "boolean" },
        quiet: { type: "boolean", short: "q" },
        help: { type: "boolean", short: "h" },
      },
      USAGE,
    );
    if (values.help) {
      io.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (positionals.length !== 1) {
      throw new UsageError(
        positionals.length === 0 ? "missing <workflow-id>" : "expected one <workflow-id>",
        USAGE,
      );
    }
    const timeoutSeconds = parseTimeout(values.timeout);
    const json = values.json === true;
    const progress = !json && values.quiet !== true;
    const engine = createEngine({ cwd: io.cwd, env: io.env, onWarning: warnOn(io) });
    const workflowId = positionals[0]!;
    const loadTimeout = loadTimeoutMs(io.env);
    const run = engine.run(
      {
        workflowId,
        input: values.input ?? "",
        ...(values.session === undefined ? {} : { sessionId: values.session }),
        trust: values.trust === true,
        timeoutSeconds,
        policy: "fail",
        ...(loadTimeout === null ? {} : { loadTimeoutMs: loadTimeout }),
      },
      { signal },
    );
    run.events.on("load_output", (event) => {
      io.stderr.write("captured output (load):\n");
      const text = event.output.text.endsWith("\n") ? event.output.text.slice(0, -1) : event.output.text;
      for (const line of text.split(/\r?\n/)) io.stderr.write(`  | ${oneLine(line)}\n`);
    });
    run.events.on("warning", (event) => {
      io.stderr.write(`warning: ${event.source === "hooks" ? "hook: " : ""}${oneLine(event.message)}\n`);
    });
    if (progress) {
      run.events.on("run_accepted", (event) => {
        io.stderr.write(
          `Running ${oneLine(event.workflow_id)} · ${oneLine(event.title)} (session ${event.session_id})\n`,
        );
      });
      const lines = new ProgressLines();
      run.events.on("event", (event: EngineEvent) => {
        for (const line of lines.of(event)) io.stderr.write(`${line}\n`);
      });
    }
    const report = await run.result;
    await engine.close();
    const duration = (performance.now() - started) / 1000;
    const code = exitCodeOf(report, false);

    if (report.status === "rejected") {
      if (json) {
        io.stderr.write(
          `${JSON.stringify({ error: { code: report.code, message: report.message, hint: cliHint(report, workflowId), session_id: report.session_id, diagnostics: report.diagnostics } })}\n`,
        );
      } else {
        for (const d of report.diagnostics) {
          for (const line of renderDiagnostic(d, io.cwd)) io.stderr.write(`${line}\n`);
        }
        io.stderr.write(`error: ${oneLine(report.message)} [${report.code}]\n`);
        const hint = cliHint(report, workflowId);
        if (hint !== null) io.stderr.write(`  help: ${oneLine(hint)}\n`);
      }
      return code;
    }

    const native = report.diagnostics.native;
    if (!json && native !== undefined && native.text !== "") {
      io.stderr.write("output outside nodes:\n");
      const text = native.text.endsWith("\n") ? native.text.slice(0, -1) : native.text;
      for (const line of text.split(/\r?\n/)) io.stderr.write(`  | ${oneLine(line)}\n`);
      if (native.dropped_bytes > 0)
        io.stderr.write(`  | … (${native.dropped_bytes} earlier bytes dropped)\n`);
    }
    if (json) {
      io.stdout.write(`${JSON.stringify(resultJson(report, duration))}\n`);
      if (report.outcome !== "completed") {
        io.stderr.write(
          `${JSON.stringify({ error: { outcome: report.outcome, reason: report.reason, node_id: report.node_id, message: report.error, error_class: report.error_class } })}\n`,
        );
      }
    } else {
      if (report.outputs.length > 0) io.stdout.write(`${report.outputs.map((o) => o.text).join("\n\n")}\n`);
      if (report.outcome === "completed") {
        if (progress) io.stderr.write("✓ Workflow completed\n");
      } else {
        io.stderr.write(`✗ ${oneLine(failureText(report))}\n`);
      }
    }
    return code;
  },
};
