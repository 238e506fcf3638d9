import { version } from "../package.json";
import { parseCommandLine } from "./command-line/parse";
import type { ParsedCommand } from "./command-line/spec";
import { TREE } from "./command-tree";
import { EXIT, exitCodeOfSignal, STOP_SIGNALS, type StopSignal } from "./exit-codes";
import type { CliIo } from "./io";
import { loadCommand } from "./load-command";
import { errorJsonLine } from "./render/error-json";
import { isUsageError } from "./usage";

/** The CLI's version, as its package.json says (bundled in at build time). */
export const VERSION: string = version;

/**
 * Reads the command line against the command tree, runs one command, and returns the exit code; the bin is
 * the only place that exits. A command that stops cleanly (`stoppable`) gets an abort signal for the first
 * Ctrl-C, SIGTERM or SIGHUP (its reason is the signal's name); a second one exits at once.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const line = parseCommandLine(argv, TREE, VERSION);
  switch (line.kind) {
    case "help":
      io[line.stream].write(line.text);
      return line.exitCode;
    case "version":
      io.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    case "usage":
      return usageError(io, line, line.json);
    case "command":
      return runCommand(line.command, line.json, io);
  }
}

async function runCommand(command: ParsedCommand, json: boolean, io: CliIo): Promise<number> {
  const controller = new AbortController();
  const onSignal = (signal: StopSignal) => {
    if (controller.signal.aborted) process.exit(exitCodeOfSignal(signal));
    controller.abort(signal);
  };
  const stoppable = command.spec.stoppable === true;
  if (stoppable) for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  // Started before the command's bundle is loaded, so that Python starts while Node compiles it.
  const prestarted =
    command.spec.bundle === "workflow-validate" ? (await import("./prestart")).prestartValidate(io) : null;
  try {
    const loaded = await loadCommand(command.spec.bundle);
    return await loaded.run({ command, io, signal: controller.signal, prestarted });
  } catch (error) {
    if (isUsageError(error)) return usageError(io, error, json);
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr.write(`icode: internal error: ${message}\n`);
    if (json) {
      const first = error instanceof Error ? error.message : String(error);
      io.stdout.write(errorJsonLine({ code: "internal_error", message: first, hint: REPORT_HINT }));
    }
    return EXIT.failed;
  } finally {
    prestarted?.process.discard(); // not adopted: the command stopped before it validated
    if (stoppable) for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}

const REPORT_HINT = "this is a defect of icode; please report it with the command line and the stderr output";

/**
 * A usage error: `icode: <message>`, a blank line and the usage on stderr, exit 2; in `--json` mode also the
 * error object on stdout (decision 0031).
 */
function usageError(
  io: CliIo,
  { message, usage, help }: { message: string; usage: string; help: string },
  json: boolean,
): number {
  io.stderr.write(`icode: ${message}\n\n${usage}`);
  if (json) io.stdout.write(errorJsonLine({ code: "usage_error", message, hint: `see ${help}` }));
  return EXIT.usage;
}
