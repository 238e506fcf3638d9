import { describe, expect, it } from "vitest";
import { ShellFilterSchema } from "./schema/agent-profile";
import { checkShellCommand } from "./shell-filter";
import { parseShell } from "./shell-parse";

const f = (input: unknown) => ShellFilterSchema.parse(input);

describe("shell filter (2.2)", () => {
  it.each<[string, unknown, string, boolean]>([
    ["no filter allows everything", undefined, "rm -rf /", true],
    ["unrestricted allows everything", "unrestricted", "rm -rf / > x $(y)", true],
    ["an unknown scalar preset filters nothing", "strict", "rm -rf x", true],
    ["read_only allows ls", "read_only", "ls -la", true],
    ["read_only allows git and rg in a pipeline", "read_only", "git log | rg fix", true],
    ["read_only does not inspect arguments", "read_only", "git push --force", true],
    ["read_only allows PowerShell Get-Content", "read_only", "Get-Content README.md", true],
    ["read_only blocks rm", "read_only", "rm x", false],
    ["read_only blocks an unquoted redirection", "read_only", "cat a > b", false],
    ["read_only blocks >>", "read_only", "echo a >> b", false],
    ["read_only blocks <", "read_only", "cat < a", false],
    ["read_only allows a quoted >", "read_only", "echo 'a > b'", true],
    ["read_only allows a double-quoted >", "read_only", 'rg "a>b" .', true],
    ["read_only blocks $()", "read_only", "echo $(whoami)", false],
    ["read_only blocks backticks", "read_only", "echo `whoami`", false],
    ["read_only blocks $() inside double quotes", "read_only", 'echo "$(whoami)"', false],
    ["read_only allows $( in single quotes", "read_only", "echo '$(whoami)'", true],
    ["read_only blocks a ( ) subshell", "read_only", "(ls)", false],
    ["read_only checks every segment of &&", "read_only", "ls && rm x", false],
    ["read_only checks ||", "read_only", "ls || rm x", false],
    ["read_only checks ;", "read_only", "ls; rm x", false],
    ["read_only checks a newline", "read_only", "ls\nrm x", false],
    ["read_only checks &", "read_only", "ls & rm x", false],
    ["read_only checks |&", "read_only", "ls |& rm x", false],
    ["read_only blocks a wrapped command", "read_only", "sudo rm x", false],
    ["a preset overrides the custom fields", { preset: "read_only", commands: ["rm"] }, "rm x", false],
    ["whitelist: rg passes", { commands: ["git", "rg"] }, "rg foo .", true],
    ["whitelist: a pipe into less is blocked", { commands: ["git", "rg"] }, "rg foo . | less", false],
    ["whitelist names are case-sensitive", { commands: ["git"] }, "Git status", false],
    ["whitelist: a path must match in full", { commands: ["git"] }, "/usr/bin/git status", false],
    [
      "whitelist: a listed absolute path matches",
      { commands: ["/usr/bin/git"] },
      "/usr/bin/git status",
      true,
    ],
    [
      "whitelist: assignments before the command are skipped",
      { commands: ["make"] },
      "CC=gcc make all",
      true,
    ],
    ["whitelist: a command inside $() is checked", { commands: ["echo"] }, "echo $(rm -rf x)", false],
    ["whitelist: a command inside $() that passes", { commands: ["echo", "date"] }, "echo $(date)", true],
    ["whitelist: sh -c is checked inside", { commands: ["sh", "ls"] }, "sh -c 'ls; rm x'", false],
    ["whitelist: env runs the next command", { commands: ["env", "ls"] }, "env FOO=1 rm x", false],
    ["empty commands filter no names", { commands: [] }, "rm x", true],
    [
      "empty commands still apply allow_redirections",
      { commands: [], allow_redirections: false },
      "ls > x",
      false,
    ],
    [
      "allow_subshells false blocks $()",
      { commands: ["echo"], allow_subshells: false },
      "echo $(echo)",
      false,
    ],
    [
      "allow_redirections false allows 2>&1 quoted",
      { commands: ["ls"], allow_redirections: false },
      "ls '2>&1'",
      true,
    ],
    [
      "allow_redirections false blocks 2>&1",
      { commands: ["ls"], allow_redirections: false },
      "ls 2>&1",
      false,
    ],
    ["blacklist blocks a listed command", { mode: "blacklist", commands: ["rm"] }, "ls && rm x", false],
    ["blacklist allows the rest", { mode: "blacklist", commands: ["rm"] }, "ls && cat x", true],
    [
      "blacklist also blocks the command by path",
      { mode: "blacklist", commands: ["rm"] },
      "/bin/rm x",
      false,
    ],
    ["blacklist checks wrapped commands", { mode: "blacklist", commands: ["rm"] }, "sudo -n rm x", false],
    ["blacklist checks timeout's command", { mode: "blacklist", commands: ["rm"] }, "timeout 5 rm x", false],
    ["blacklist checks bash -c", { mode: "blacklist", commands: ["rm"] }, 'bash -c "rm x"', false],
    ["an unclosed quote is blocked", { commands: ["ls"] }, "ls 'x", false],
    ["a comment is not a command", { commands: ["ls"] }, "ls # rm x", true],
  ])("%s", (_t, filter, command, allowed) => {
    const result = checkShellCommand(filter === undefined ? undefined : f(filter), command);
    expect(result.allowed).toBe(allowed);
    if (!result.allowed) expect(result.reason.length).toBeGreaterThan(10);
  });

  it("names the blocked command", () => {
    expect(checkShellCommand(f({ commands: ["git", "rg"] }), "rg foo . | less")).toEqual({
      allowed: false,
      reason: '"less" is not in the shell filter\'s allowed commands',
      command: "less",
    });
  });
});

describe("shell segment reading", () => {
  it("splits, unquotes and keeps redirection targets apart", () => {
    const p = parseShell(`FOO=1 grep -n "a b" 'c' > out.txt 2>&1 | wc -l && echo done`);
    expect(p.segments).toEqual([
      {
        words: ["FOO=1", "grep", "-n", "a b", "c"],
        redirections: [
          { op: ">", target: "out.txt" },
          { op: ">&", target: "1" },
        ],
      },
      { words: ["wc", "-l"], redirections: [] },
      { words: ["echo", "done"], redirections: [] },
    ]);
    expect([p.redirects, p.subshells, p.unterminated]).toEqual([true, false, false]);
  });

  it("collects nested substitutions", () => {
    expect(parseShell("echo $(a $(b)) `c` <(d)").substitutions).toEqual(["a $(b)", "c", "d"]);
  });
});
