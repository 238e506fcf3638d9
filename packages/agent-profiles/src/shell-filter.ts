import type { ShellFilter } from "./schema/agent-profile";
import { commandName, parseShell, type ShellSegment } from "./shell-parse";

/**
 * Commands the `read_only` preset allows. A fixed list of commands that usually read (it does not inspect
 * their arguments: `git push` and `python x.py` pass; it is no sandbox).
 */
export const READ_ONLY_COMMANDS: readonly string[] = [
  "ls",
  "dir",
  "cat",
  "head",
  "tail",
  "less",
  "more",
  "wc",
  "rg",
  "grep",
  "egrep",
  "fgrep",
  "find",
  "fd",
  "tree",
  "pwd",
  "echo",
  "printf",
  "which",
  "whereis",
  "type",
  "file",
  "stat",
  "du",
  "df",
  "diff",
  "cmp",
  "sort",
  "uniq",
  "cut",
  "tr",
  "column",
  "nl",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "date",
  "uname",
  "whoami",
  "id",
  "hostname",
  "printenv",
  "ps",
  "git",
  "python",
  "python3",
  "node",
  "curl",
  "jq",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "true",
  "false",
  "test",
  // PowerShell and cmd.exe
  "Get-Content",
  "Get-ChildItem",
  "Get-Item",
  "Get-Location",
  "Select-String",
  "Test-Path",
  "Measure-Object",
  "Get-Command",
  "findstr",
  "where",
];

/** Commands that run the command after them; the wrapped command must pass too. */
const WRAPPERS = new Set([
  "env",
  "sudo",
  "doas",
  "command",
  "builtin",
  "exec",
  "nohup",
  "time",
  "nice",
  "xargs",
  "timeout",
  "stdbuf",
]);
/** Shells whose `-c` argument is itself a command line. */
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish"]);

export type ShellCheck = { allowed: true } | { allowed: false; reason: string; command: string | null };

/**
 * Checks a command line against a profile's `tools.shell_filter` (agent-profiles.md 2.2). Every segment's
 * command must pass, including commands inside substitutions, after wrappers (`sudo rm`) and in `sh -c`.
 * No filter, preset `unrestricted` or an empty custom `commands` list filter no names; the redirection and
 * subshell switches apply in every mapping form.
 */
export function checkShellCommand(filter: ShellFilter | undefined, commandLine: string): ShellCheck {
  if (filter === undefined || filter.preset === "unrestricted") return { allowed: true };
  const rules =
    filter.preset === "read_only"
      ? { mode: "whitelist" as const, commands: READ_ONLY_COMMANDS, redirections: false, subshells: false }
      : {
          mode: filter.mode,
          commands: filter.commands,
          redirections: filter.allow_redirections,
          subshells: filter.allow_subshells,
        };
  return check(rules, commandLine, 0);
}

interface Rules {
  mode: "whitelist" | "blacklist";
  commands: readonly string[];
  redirections: boolean;
  subshells: boolean;
}

function check(rules: Rules, line: string, depth: number): ShellCheck {
  if (depth > 8) return { allowed: false, reason: "the command nests too deeply to check", command: null };
  const parsed = parseShell(line);
  if (parsed.unterminated)
    return { allowed: false, reason: "the command has an unclosed quote or substitution", command: null };
  if (!rules.redirections && parsed.redirects) {
    return {
      allowed: false,
      reason: "unquoted redirection (>, >>, <) is not allowed by the shell filter",
      command: null,
    };
  }
  if (!rules.subshells && parsed.subshells) {
    return {
      allowed: false,
      reason: "command substitution and subshells ($( ), backticks, ( )) are not allowed by the shell filter",
      command: null,
    };
  }
  for (const segment of parsed.segments) {
    const result = checkSegment(rules, segment, depth);
    if (!result.allowed) return result;
  }
  for (const inner of parsed.substitutions) {
    const result = check(rules, inner, depth + 1);
    if (!result.allowed) return result;
  }
  return { allowed: true };
}

function checkSegment(rules: Rules, segment: ShellSegment, depth: number): ShellCheck {
  const found = commandName(segment);
  if (found === null) return { allowed: true };
  const { name, index } = found;
  if (!nameAllowed(rules, name)) {
    const reason =
      rules.mode === "whitelist"
        ? `"${name}" is not in the shell filter's allowed commands`
        : `"${name}" is blocked by the shell filter`;
    return { allowed: false, reason, command: name };
  }
  const rest = segment.words.slice(index + 1);
  if (WRAPPERS.has(name)) {
    const wrapped = rest.findIndex(
      (w, i) =>
        !w.startsWith("-") &&
        !/^[A-Za-z_][A-Za-z0-9_]*=/u.test(w) &&
        !(name === "timeout" && i === 0 && /^\d/u.test(w)),
    );
    if (wrapped >= 0) return checkSegment(rules, { words: rest.slice(wrapped), redirections: [] }, depth);
  }
  if (SHELLS.has(name)) {
    const c = rest.indexOf("-c");
    const script = c >= 0 ? rest[c + 1] : undefined;
    if (script !== undefined) return check(rules, script, depth + 1);
  }
  return { allowed: true };
}

function nameAllowed(rules: Rules, name: string): boolean {
  if (rules.commands.length === 0) return true;
  if (rules.mode === "whitelist") return rules.commands.includes(name);
  // A blacklist also blocks the listed name when it is run by path (/bin/rm, rm.exe).
  const base = name.split(/[\\/]/u).at(-1) as string;
  return !rules.commands.some((c) => c === name || c === base || `${c}.exe` === base);
}
