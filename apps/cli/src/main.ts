import { EXIT } from "./exit-codes";
import type { CliIo } from "./io";
import { type CommandName, loadCommand } from "./load-command";
import { oneLine } from "./render/flatten";
import { isUsageError } from "./usage";

export const VERSION = "0.1.0";

const HELP = `icode ${VERSION}: run and check iCode workflows

Usage:
  icode workflow list [--json]                 List the workflows found from this folder
  icode workflow validate <path> [--json]      Check a workflow file or folder like a compiler
  icode workflow run <workflow-id> [options]   Run a workflow and print its outputs
  icode trajectory export --session ID --format json|perfetto --out FILE

Options:
  -h, --help       Show help (also after a command: icode workflow run --help)
  -v, --version    Show the version

Configuration lives in $CHRYS_HOME (default ~/.chrys). See docs/ for the workflow reference.
`;

// Each command is loaded when it runs (a bundle of its own in the build; see load-command.ts): `icode
// workflow list` then loads only what listing uses, not the zod schemas and Python bridge of validate and run.
const COMMANDS: Record<string, CommandName> = {
  "workflow validate": "workflow-validate",
  "workflow list": "workflow-list",
  "workflow run": "workflow-run",
  "trajectory export": "trajectory-export",
};

/** Parses argv, runs one command, and returns the exit code; the bin is the only place that exits. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [group, name, ...rest] = argv;
  if (group === undefined) {
    io.stderr.write(HELP);
    return EXIT.usage;
  }
  if (group === "-h" || group === "--help" || group === "help") {
    io.stdout.write(HELP);
    return EXIT.ok;
  }
  if (group === "-v" || group === "--version") {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const key = `${group} ${name ?? ""}`;
  const commandName = COMMANDS[key];
  if (commandName === undefined) {
    const known = Object.keys(COMMANDS).filter((k) => k.startsWith(`${group} `));
    const hint =
      known.length > 0 ? `commands: ${known.map((k) => `icode ${k}`).join(", ")}` : "run icode --help";
    io.stderr.write(`icode: unknown command '${oneLine(argv.slice(0, 2).join(" "))}' (${hint})\n`);
    return EXIT.usage;
  }
  const controller = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(EXIT.interrupted);
    interrupted = true;
    controller.abort(new Error("interrupted"));
  };
  process.on("SIGINT", onSigint);
  // Started before the command's bundle is loaded, so that Python starts while Node compiles it.
  const prestarted =
    commandName === "workflow-validate" ? (await import("./prestart")).prestartValidate(rest, io) : null;
  try {
    const command = await loadCommand(commandName);
    const code = await command.run(rest, io, controller.signal, prestarted);
    return interrupted ? EXIT.interrupted : code;
  } catch (error) {
    if (isUsageError(error)) {
      io.stderr.write(`icode: ${error.message}\n\n${error.usage}`);
      return EXIT.usage;
    }
    if (interrupted) return EXIT.interrupted;
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.stderr.write(`icode: internal error: ${message}\n`);
    return EXIT.failed;
  } finally {
    prestarted?.process.discard(); // not adopted: the command stopped before it validated
    process.off("SIGINT", onSigint);
  }
}
