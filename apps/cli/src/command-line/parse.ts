import { commandHelp, groupHelp, helpCommand, overviewHelp, shortUsage } from "./help";
import type { CommandSpec, CommandTree, OptionSpec, OptionValues, ParsedCommand } from "./spec";
import { nearest } from "./suggest";

/** What a command line asks for, once read against the command tree. */
export type CommandLine =
  /** Help text: to stdout with exit 0 when asked for, to stderr with exit 2 when a command was missing. */
  | { kind: "help"; text: string; stream: "stdout" | "stderr"; exitCode: 0 | 2 }
  | { kind: "version" }
  /**
   * A usage error (exit 2): `usage` is shown under the message, `help` is the command that shows the full
   * help; `json` when `--json` was given, so the error is also written as JSON.
   */
  | { kind: "usage"; message: string; usage: string; help: string; json: boolean }
  | { kind: "command"; command: ParsedCommand; json: boolean };

const HELP_WORDS = new Set(["-h", "--help"]);
const VERSION_WORDS = new Set(["-v", "--version"]);

/**
 * Reads `argv` (without the program) against `tree`. An option that takes a value takes the next word,
 * whatever it starts with (`--input -2`, `--input "--- a"`, `-s -x`), or the rest of its word
 * (`--input=-2`, `-sID`); `--` ends the options. `-h`/`--help` anywhere among a command's options asks for
 * its help. Unknown commands and options suggest the nearest known one.
 */
export function parseCommandLine(argv: readonly string[], tree: CommandTree, version: string): CommandLine {
  const overview = overviewHelp(tree, version);
  const json = jsonAsked(argv);
  const topHelp = helpCommand(tree, []);
  const topUsage = `Usage: ${tree.program} <command> [options]\nRun '${topHelp}' for the commands.\n`;
  const [first, second] = argv;
  if (first === undefined) return { kind: "help", text: overview, stream: "stderr", exitCode: 2 };
  if (HELP_WORDS.has(first)) return { kind: "help", text: overview, stream: "stdout", exitCode: 0 };
  if (VERSION_WORDS.has(first)) return { kind: "version" };
  if (first === "help") return helpFor(argv.slice(1), tree, overview, topUsage);
  if (first.startsWith("-")) {
    const near = nearest(first, ["--help", "--version"]);
    return usageError(`unknown option '${first}'${didYouMean(near)}`, topUsage, topHelp, json);
  }
  const top = tree.commands.find((c) => c.path[0] === first);
  if (top !== undefined) return parseCommand(top, argv.slice(1), tree);
  const group = tree.groups.find((g) => g.name === first);
  if (group === undefined) {
    const names = [...tree.groups.map((g) => g.name), ...tree.commands.map((c) => c.path[0]!), "help"];
    return usageError(
      `unknown command '${first}'${didYouMean(nearest(first, names))}`,
      topUsage,
      topHelp,
      json,
    );
  }
  const help = groupHelp(tree, group);
  const fallback = group.commands.find((c) => c.path[1] === group.default);
  if (fallback !== undefined && (second === undefined || second.startsWith("-"))) {
    return parseCommand(fallback, argv.slice(1), tree);
  }
  if (second === undefined) return { kind: "help", text: help, stream: "stderr", exitCode: 2 };
  if (HELP_WORDS.has(second)) return { kind: "help", text: help, stream: "stdout", exitCode: 0 };
  const command = group.commands.find((c) => c.path[1] === second);
  if (command === undefined) {
    const names = group.commands.map((c) => c.path[1]!);
    const what = second.startsWith("-")
      ? `'${tree.program} ${group.name}' needs a command before its options (${names.join(", ")})`
      : `unknown command '${group.name} ${second}'${didYouMean(nearest(second, names))}`;
    return usageError(what, help, helpCommand(tree, [group.name]), json);
  }
  return parseCommand(command, argv.slice(2), tree);
}

/** `icode help`, `icode help workflow`, `icode help workflow run`. */
function helpFor(
  words: readonly string[],
  tree: CommandTree,
  overview: string,
  topUsage: string,
): CommandLine {
  const shown = (text: string): CommandLine => ({ kind: "help", text, stream: "stdout", exitCode: 0 });
  const [first, second] = words;
  if (first === undefined) return shown(overview);
  const top = tree.commands.find((c) => c.path[0] === first);
  if (top !== undefined) return shown(commandHelp(tree, top));
  const group = tree.groups.find((g) => g.name === first);
  if (group === undefined) {
    const names = [...tree.groups.map((g) => g.name), ...tree.commands.map((c) => c.path[0]!)];
    return usageError(
      `no help for unknown command '${first}'${didYouMean(nearest(first, names))}`,
      topUsage,
      helpCommand(tree, []),
      false,
    );
  }
  if (second === undefined) return shown(groupHelp(tree, group));
  const command = group.commands.find((c) => c.path[1] === second);
  if (command === undefined) {
    const names = group.commands.map((c) => c.path[1]!);
    return usageError(
      `no help for unknown command '${first} ${second}'${didYouMean(nearest(second, names))}`,
      groupHelp(tree, group),
      helpCommand(tree, [group.name]),
      false,
    );
  }
  return shown(commandHelp(tree, command));
}

function parseCommand(spec: CommandSpec, words: readonly string[], tree: CommandTree): CommandLine {
  const values: OptionValues = {};
  for (const option of spec.options) values[option.name] = option.value === undefined ? false : undefined;
  const args: string[] = [];
  const afterSeparator: boolean[] = [];
  const given = new Set<string>();
  let problem: string | null = null;
  let help = false;
  let separated = false;
  const fail = (message: string) => {
    problem ??= message;
  };
  const set = (option: OptionSpec, value: string | true, as: string) => {
    if (option.value !== undefined && given.has(option.name)) fail(`${as} is given more than once`);
    given.add(option.name);
    values[option.name] = value;
  };
  const longNames = [...spec.options.map((o) => `--${o.name}`), "--help"];

  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (separated || word === "-" || !word.startsWith("-")) {
      args.push(word);
      afterSeparator.push(separated);
      continue;
    }
    if (word === "--") {
      separated = true;
      continue;
    }
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const name = word.slice(2, eq === -1 ? undefined : eq);
      const inline = eq === -1 ? undefined : word.slice(eq + 1);
      if (name === "help") {
        if (inline !== undefined) fail("--help takes no value");
        help = true;
        continue;
      }
      const option = spec.options.find((o) => o.name === name);
      if (option === undefined) {
        fail(`unknown option '--${name}'${didYouMean(nearest(`--${name}`, longNames))}`);
        continue;
      }
      if (option.value === undefined) {
        if (inline !== undefined) fail(`--${name} takes no value, got '${inline}'`);
        set(option, true, `--${name}`);
      } else if (inline !== undefined) {
        set(option, inline, `--${name}`);
      } else if (i + 1 < words.length) {
        set(option, words[++i]!, `--${name}`);
      } else {
        fail(`--${name} needs a value (${option.value})`);
      }
      continue;
    }
    // A cluster of short options: `-q`, `-qh`, `-sID`, `-s ID`.
    for (let j = 1; j < word.length; j++) {
      const letter = word[j]!;
      if (letter === "h") {
        help = true;
        continue;
      }
      const option = spec.options.find((o) => o.short === letter);
      if (option === undefined) {
        const near = word.length === 2 ? nearest(word, longNames) : null;
        fail(`unknown option '-${letter}'${didYouMean(near)}`);
        break;
      }
      if (option.value === undefined) {
        set(option, true, `-${letter}`);
        continue;
      }
      const rest = word.slice(j + 1);
      if (rest !== "") set(option, rest, `-${letter}`);
      else if (i + 1 < words.length) set(option, words[++i]!, `-${letter}`);
      else fail(`-${letter} needs a value (${option.value})`);
      break;
    }
  }

  const json = values["json"] === true;
  if (help) return { kind: "help", text: commandHelp(tree, spec), stream: "stdout", exitCode: 0 };
  const text = shortUsage(tree, spec);
  const usage = (message: string) => usageError(message, text, helpCommand(tree, spec.path), json);
  if (problem !== null) return usage(problem);
  for (const option of spec.options) {
    const value = values[option.name];
    if (option.choices !== undefined && typeof value === "string" && !option.choices.includes(value)) {
      return usage(`--${option.name} must be ${option.choices.join(" or ")}, got '${value}'`);
    }
  }
  for (const name of spec.required ?? []) {
    if (!given.has(name)) return usage(`missing --${name}`);
  }
  for (const [a, b] of spec.conflicts ?? []) {
    if (given.has(a) && given.has(b)) return usage(`--${a} and --${b} cannot be used together`);
  }
  if (args.length < spec.args.length) {
    return usage(`missing <${spec.args[args.length]!.name}>`);
  }
  if (args.length > spec.args.length) {
    const expected =
      spec.args.length === 0
        ? "it takes no arguments"
        : `it takes one <${spec.args.map((a) => a.name).join("> <")}>`;
    return usage(`unexpected argument '${args[spec.args.length]}' (${expected})`);
  }
  for (const [i, arg] of spec.args.entries()) {
    if (arg.choices !== undefined && !arg.choices.includes(args[i]!)) {
      const near = nearest(args[i]!, arg.choices);
      return usage(`<${arg.name}> must be ${arg.choices.join(", ")}, got '${args[i]}'${didYouMean(near)}`);
    }
  }
  return { kind: "command", command: { spec, values, args, afterSeparator }, json };
}

function usageError(message: string, text: string, help: string, json: boolean): CommandLine {
  return { kind: "usage", message, usage: text, help, json };
}

function didYouMean(word: string | null): string {
  return word === null ? "" : ` (did you mean \`${word}\`?)`;
}

/** Whether `--json` is among the words before `--`: a usage error is then also written as JSON. */
function jsonAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}
