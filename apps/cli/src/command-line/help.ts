import type { CommandSpec, CommandTree, GroupSpec, OptionSpec } from "./spec";

/** `-s, --session ID` / `    --trust`: how an option is written in help. */
function optionLabel(option: OptionSpec): string {
  const long = `--${option.name}${option.value === undefined ? "" : ` ${option.value}`}`;
  return option.short === undefined ? long : `-${option.short}, ${long}`;
}

/** `[-s ID]`: an option as the usage line shows it (short form when there is one). */
function usageItem(option: OptionSpec, required: boolean): string {
  const flag = option.short === undefined ? `--${option.name}` : `-${option.short}`;
  const item = option.value === undefined ? flag : `${flag} ${option.value}`;
  return required ? item : `[${item}]`;
}

/** `icode workflow run <workflow-id> [--input TEXT] … [-q]`. */
function usageLine(tree: CommandTree, spec: CommandSpec): string {
  const required = new Set(spec.required ?? []);
  return [
    tree.program,
    ...spec.path,
    ...spec.args.map((a) => `<${a.name}>`),
    ...spec.options.map((o) => usageItem(o, required.has(o.name))),
  ].join(" ");
}

function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 3;
  // A summary of several lines continues under its first line.
  return rows.map(([left, right]) =>
    `  ${left.padEnd(width)}${right.split("\n").join(`\n  ${" ".repeat(width)}`)}`.trimEnd(),
  );
}

const HELP_OPTION: OptionSpec = { name: "help", short: "h", summary: "Show this help" };

/** What a usage error shows under its message: the usage line and where the full help is. */
export function shortUsage(tree: CommandTree, spec: CommandSpec): string {
  return `Usage: ${usageLine(tree, spec)}\nRun '${helpCommand(tree, spec.path)}' for the arguments and options.\n`;
}

/** `icode workflow run --help`. */
export function helpCommand(tree: CommandTree, path: readonly string[]): string {
  return [tree.program, ...path, "--help"].join(" ");
}

/** A command's `--help`. */
export function commandHelp(tree: CommandTree, spec: CommandSpec): string {
  const parts = [`Usage: ${usageLine(tree, spec)}`, spec.description];
  if (spec.args.length > 0) {
    parts.push(["Arguments:", ...columns(spec.args.map((a) => [`<${a.name}>`, a.summary]))].join("\n"));
  }
  parts.push(
    ["Options:", ...columns([...spec.options, HELP_OPTION].map((o) => [optionLabel(o), o.summary]))].join(
      "\n",
    ),
  );
  if (spec.notes !== undefined) parts.push(spec.notes);
  return `${parts.join("\n\n")}\n`;
}

/** A group's help (`icode workflow`, `icode workflow --help`): its commands. */
export function groupHelp(tree: CommandTree, group: GroupSpec): string {
  const rows = group.commands.map((c) => [c.path[c.path.length - 1]!, c.summary] as const);
  return `${[
    `Usage: ${tree.program} ${group.name} <command> [options]`,
    group.summary,
    ["Commands:", ...columns(rows)].join("\n"),
    `Run '${tree.program} ${group.name} <command> --help' for a command's arguments and options.`,
  ].join("\n\n")}\n`;
}

/** `icode --help`: every command, the global options and the footer. */
export function overviewHelp(tree: CommandTree, version: string): string {
  const commands = [...tree.groups.flatMap((g) => g.commands), ...tree.commands];
  return `${[
    `${tree.program} ${version}: ${tree.summary}`,
    `Usage: ${tree.program} <command> [options]`,
    ["Commands:", ...columns(commands.map((c) => [c.path.join(" "), c.summary] as const))].join("\n"),
    [
      "Options:",
      ...columns([
        ["-h, --help", `Show help (also after a command: ${tree.program} workflow run --help)`],
        ["-v, --version", "Show the version"],
      ]),
    ].join("\n"),
    tree.footer,
  ].join("\n\n")}\n`;
}
