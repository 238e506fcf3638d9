import {
  createEngine,
  type EngineEvent,
  type FinishedRun,
  listWorkflowsFor,
  type RejectedRun,
  type RunReport,
} from "@icode/workflow-engine";
import type { CommandContext } from "../command";
import { helpCommand, shortUsage } from "../command-line/help";
import type { ParsedCommand } from "../command-line/spec";
import { nearest } from "../command-line/suggest";
import { TREE, type ValuesOf, type WORKFLOW_RUN } from "../command-tree";
import { EXIT, type ExitCode, exitCodeOfSignal, type StopSignal, stopSignalOf } from "../exit-codes";
import { readInputFile } from "../input-file";
import type { CliIo } from "../io";
import type { RunFailureJson } from "../json/error";
import type { RunResultJson } from "../json/run-result";
import { askOnTerminal } from "../render/ask-terminal";
import { errorJsonLine } from "../render/error-json";
import { oneLine } from "../render/flatten";
import { ProgressLines } from "../render/progress";
import { shellQuote } from "../render/shell-quote";
import { tracebackLines } from "../render/traceback";
import { cliHintOf, renderDiagnostic } from "../render/validate-text";
import { loadTimeoutMs } from "../settings";
import { UsageError } from "../usage";
import { warnOn } from "../warnings";

type Values = ValuesOf<typeof WORKFLOW_RUN>;

/** A number of seconds as people write it: digits with an optional fraction and exponent, nothing else. */
const DECIMAL = /^\+?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

type Refuse = (message: string) => UsageError;

function parseTimeout(raw: string | undefined, refuse: Refuse): number | null {
  if (raw === undefined) return null;
  const value = DECIMAL.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value <= 0) {
    throw refuse(`--timeout must be a finite positive number of seconds, got '${raw}'`);
  }
  return value;
}

/**
 * `--model`: the default model of a NEW session, saved with it. With `-s` it is a usage error whatever the
 * session saved: the session keeps its own model (workflow reference, "Model selection"), and silently
 * running it with another would make its runs disagree about what "the workflow's default model" is.
 */
function checkModel(values: Values, refuse: Refuse): string | null {
  const model = values.model;
  if (model === undefined) return null;
  if (values.session !== undefined) {
    throw refuse(
      "--model sets the default model of a new session; a session given with -s keeps the model saved with it (leave out --model, or leave out -s to start a new session)",
    );
  }
  if (model.trim() === "") {
    throw refuse(
      `--model needs a model profile id or name, got ${model === "" ? "an empty string" : "only spaces"}`,
    );
  }
  return model;
}

/**
 * A workflow ID is a file or folder name iCode loads: not empty, no path separator or control character,
 * not starting with `.` or `_` (names iCode ignores), and not starting with `-` unless it came after `--`.
 */
function checkWorkflowId(parsed: ParsedCommand, refuse: Refuse): string {
  const id = parsed.args[0]!;
  const problem =
    id === ""
      ? "is empty"
      : /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(id)
        ? "holds a line break or another control character"
        : /[/\\]/.test(id)
          ? "holds a path separator (an ID is a file or folder name; use icode workflow validate for paths)"
          : id.startsWith(".") || id.startsWith("_")
            ? "starts with '.' or '_', names iCode never loads"
            : id.startsWith("-") && !parsed.afterSeparator[0]
              ? "starts with '-' (put it after '--' if that is its name)"
              : null;
  if (problem !== null) throw refuse(`<workflow-id> ${JSON.stringify(id)} ${problem}`);
  return id;
}

/** The command line that runs this workflow again with trust confirmed, as the user typed it. */
function trustedCommand(workflowId: string, values: Values): string {
  const words = ["icode", "workflow", "run", shellQuote(workflowId)];
  if (values.input !== undefined) {
    const quoted = shellQuote(values.input);
    words.push("--input", quoted.length > 1000 ? "<the same input>" : quoted);
  }
  if (values["input-file"] !== undefined) words.push("--input-file", shellQuote(values["input-file"]));
  if (values.session !== undefined) words.push("-s", shellQuote(values.session));
  if (values.model !== undefined) words.push("--model", shellQuote(values.model));
  if (values.timeout !== undefined) words.push("--timeout", shellQuote(values.timeout));
  if (values.json) words.push("--json");
  if (values.quiet) words.push("-q");
  if (values.interactive) words.push("--interactive");
  words.push("--trust");
  return words.join(" ");
}

/**
 * What to do next, in the CLI's own words: the engine's hints name no command, so the commands a user can
 * paste are added here by code.
 */
async function cliHint(report: RejectedRun, workflowId: string, values: Values, io: CliIo) {
  switch (report.code) {
    case "workflow_not_found": {
      const { workflows } = await listWorkflowsFor({ cwd: io.cwd, env: io.env });
      const near = nearest(
        workflowId,
        workflows.map((w) => w.id),
      );
      return near === null
        ? "list workflows with: icode workflow list"
        : `did you mean \`${near}\`? (icode workflow list shows every workflow)`;
    }
    case "trust_required":
      return `review the source, then run again with --trust: ${trustedCommand(workflowId, values)}`;
    case "session_not_found":
      return "list sessions with: icode sessions list (or run without -s to start a new session)";
    case "session_invalid":
      return "run without -s to start a new session";
    case "model_unresolvable":
    case "model_ambiguous":
      return "list the model profiles with: icode models (pass an id from its ID column to --model)";
    case "workflow_unreadable": {
      const reason = report.diagnostics[0];
      return reason === undefined ? report.hint : cliHintOf(reason);
    }
    case "validation_failed": {
      const file = report.diagnostics.find((d) => d.file !== null)?.file;
      return file === undefined || file === null
        ? report.hint
        : `check it with: icode workflow validate ${shellQuote(file)}`;
    }
    default:
      return report.hint;
  }
}

/** The `--json` result: exactly the spec's top-level fields. */
function resultJson(run: FinishedRun, duration: number): RunResultJson {
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

/** The exit code follows what was recorded: a signal after the run completed does not change it. */
function exitCodeOf(report: RunReport, signal: StopSignal): ExitCode {
  if (report.status === "rejected") {
    if (report.code === "deadline_exceeded") return EXIT.timeout;
    if (report.code === "interrupted") return exitCodeOfSignal(signal);
    return EXIT.failed;
  }
  if (report.outcome === "completed") return EXIT.ok;
  if (report.outcome === "cancelled" && report.reason === "deadline_exceeded") return EXIT.timeout;
  if (report.outcome === "cancelled" && report.reason === "interrupted") return exitCodeOfSignal(signal);
  return EXIT.failed;
}

const SIGNAL_WORDS: Record<StopSignal, string> = {
  SIGINT: "interrupted (Ctrl-C)",
  SIGTERM: "terminated (SIGTERM)",
  SIGHUP: "hung up (SIGHUP)",
};

function failureText(run: FinishedRun, signal: StopSignal): string {
  switch (run.outcome) {
    case "cancelled":
      return run.reason === "deadline_exceeded"
        ? "Workflow timed out (--timeout)"
        : run.reason === "interrupted"
          ? `Workflow cancelled: ${SIGNAL_WORDS[signal]}`
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

function writeLines(io: CliIo, lines: readonly string[]): void {
  for (const line of lines) io.stderr.write(`${line}\n`);
}

export const command = {
  async run({ command: parsed, io, signal }: CommandContext): Promise<number> {
    const started = performance.now();
    const refuse: Refuse = (message) =>
      new UsageError(message, shortUsage(TREE, parsed.spec), helpCommand(TREE, parsed.spec.path));
    const values = parsed.values as Values;
    const workflowId = checkWorkflowId(parsed, refuse);
    const timeoutSeconds = parseTimeout(values.timeout, refuse);
    const model = checkModel(values, refuse);
    const json = values.json;
    if (values.interactive && !(io.terminal.stdin && io.terminal.stderr)) {
      throw refuse("--interactive needs a terminal on standard input and standard error");
    }
    let input = values.input ?? "";
    if (values["input-file"] !== undefined) {
      const read = await readInputFile(values["input-file"], io.cwd, io.stdin);
      if (!read.ok) {
        const line = errorJsonLine({ code: read.code, message: read.message, hint: read.hint });
        if (json) io.stdout.write(line);
        io.stderr.write(
          json ? line : `error: ${oneLine(read.message)} [${read.code}]\n  help: ${read.hint}\n`,
        );
        return EXIT.failed;
      }
      input = read.text;
    }
    const progress = !json && !values.quiet;
    // What the engine recovered from on its own (a damaged bytecode cache dropped, say).
    const engine = createEngine({ cwd: io.cwd, env: io.env, onWarning: warnOn(io) });
    const loadTimeout = loadTimeoutMs(io.env);
    const terminal = values.interactive ? askOnTerminal(io) : null;
    const run = engine.run(
      {
        workflowId,
        input,
        ...(values.session === undefined ? {} : { sessionId: values.session }),
        ...(model === null ? {} : { model }),
        trust: values.trust,
        timeoutSeconds,
        policy: "fail",
        ...(loadTimeout === null ? {} : { loadTimeoutMs: loadTimeout }),
      },
      { signal, ...(terminal === null ? {} : { ask: terminal.ask }) },
    );
    // What goes to stderr while a question is on the terminal waits until it is answered.
    const say = (lines: readonly string[]) =>
      terminal === null ? writeLines(io, lines) : terminal.say(lines);
    run.events.on("load_output", (event) => {
      const text = event.output.text.endsWith("\n") ? event.output.text.slice(0, -1) : event.output.text;
      say([
        "captured output (load):",
        ...text.split(/\r?\n/).map((line) => `  | ${oneLine(line)}`),
        ...(event.output.truncated ? ["  | … (output truncated)"] : []),
      ]);
    });
    // Each problem once: a broken hooks.json is found again by the session_end hooks of `close()`.
    const warned = new Set<string>();
    const warning = (source: string, code: string, message: string): string[] => {
      const key = `${source}\u0000${code}\u0000${message}`;
      if (warned.has(key)) return [];
      warned.add(key);
      return [`warning: ${source === "hooks" ? "hook: " : ""}${oneLine(message)} [${code}]`];
    };
    run.events.on("warning", (event) => say(warning(event.source, event.code, event.message)));
    run.events.on("runs_recovered", (event) => {
      say(
        event.runs.map(
          (r) =>
            `note: marked run ${r.run_id} of this session orphaned: its process (pid ${r.pid}) ended without finishing it`,
        ),
      );
    });
    const failures = new Map<string, string | null>();
    run.events.on("node_failed", (event) => failures.set(event.activation_id, event.error.traceback));
    if (progress) {
      run.events.on("run_accepted", (event) => {
        say([
          `Running ${oneLine(event.workflow_id)} · ${oneLine(event.title)} (session ${event.session_id})`,
          `  run ${event.run_id}${event.location === null ? "" : ` · ${oneLine(event.location)}`}`,
        ]);
      });
      const lines = new ProgressLines();
      run.events.on("event", (event: EngineEvent) => say(lines.of(event)));
    }
    let report: RunReport;
    try {
      report = await run.result;
    } finally {
      terminal?.close();
    }
    const { warnings } = await engine.close();
    for (const w of warnings) writeLines(io, warning("hooks", w.code, w.message));
    const duration = (performance.now() - started) / 1000;
    const stop = signal.aborted ? stopSignalOf(signal) : "SIGINT";
    const code = exitCodeOf(report, stop);

    if (report.status === "rejected") {
      const hint = await cliHint(report, workflowId, values, io);
      if (json) {
        const line = errorJsonLine({
          code: report.code,
          message: report.message,
          hint,
          session_id: report.session_id,
          diagnostics: report.diagnostics,
        });
        io.stdout.write(line);
        io.stderr.write(line);
      } else {
        // A workflow that cannot be read has one reason: its message and hint say it once.
        if (report.code !== "workflow_unreadable") {
          for (const d of report.diagnostics) writeLines(io, renderDiagnostic(d, io.cwd));
        }
        io.stderr.write(`error: ${oneLine(report.message)} [${report.code}]\n`);
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
        const failure: RunFailureJson = {
          error: {
            outcome: report.outcome,
            reason: report.reason,
            node_id: report.node_id,
            message: report.error,
            error_class: report.error_class,
          },
        };
        io.stderr.write(`${JSON.stringify(failure)}\n`);
      }
    } else {
      if (report.outputs.length > 0) io.stdout.write(`${report.outputs.map((o) => o.text).join("\n\n")}\n`);
      if (report.outcome === "completed") {
        if (progress) io.stderr.write("✓ Workflow completed\n");
      } else {
        io.stderr.write(`✗ ${oneLine(failureText(report, stop))}\n`);
        const traceback = report.activation_id === null ? null : failures.get(report.activation_id);
        writeLines(io, tracebackLines(traceback ?? null, io.cwd));
      }
    }
    return code;
  },
};
