import { describe, expect, it } from "vitest";
import { approvalLevel, decideApproval, isSafeReadOnlyCommand, isSensitivePath } from "./approval";
import { ApprovalSchema } from "./schema/agent-profile";

const approval = (input: unknown) => ApprovalSchema.parse(input);

describe("approval precedence (2.3)", () => {
  it.each<[string, unknown, string, string, string, string]>([
    [
      "kind and name beats name",
      { overrides: { "filesystem.write.write_file": "skip", write_file: "require" } },
      "filesystem.write",
      "write_file",
      "skip",
      "kind_and_name",
    ],
    [
      "name beats kind",
      { overrides: { write_file: "skip", "filesystem.write": "require" } },
      "filesystem.write",
      "write_file",
      "skip",
      "name",
    ],
    [
      "kind beats the default",
      { default: "require", overrides: { shell: "auto" } },
      "shell",
      "bash",
      "auto",
      "kind",
    ],
    [
      "YAML order does not matter",
      { overrides: { "filesystem.write": "require", write_file: "skip" } },
      "filesystem.write",
      "write_file",
      "skip",
      "name",
    ],
    [
      "a key equal to a kind means the kind, not a tool of that name",
      { overrides: { search: "require" } },
      "mcp",
      "search",
      "auto",
      "default",
    ],
    [
      "kind.name reaches a tool named like a kind",
      { overrides: { "mcp.search": "require" } },
      "mcp",
      "search",
      "require",
      "kind_and_name",
    ],
    [
      "the kind key still matches its own tools",
      { overrides: { search: "require" } },
      "search",
      "grep",
      "require",
      "kind",
    ],
    [
      "web_search keys also match a tool of that name",
      { overrides: { web_search: "skip" } },
      "mcp",
      "web_search",
      "skip",
      "name",
    ],
    [
      "run_skill_script requires approval",
      { overrides: {} },
      "skill",
      "run_skill_script",
      "require",
      "builtin_exception",
    ],
    [
      "web_search tools require approval",
      { overrides: {} },
      "web_search",
      "web_search",
      "require",
      "builtin_exception",
    ],
    [
      "web_fetch tools require approval",
      { default: "skip", overrides: {} },
      "web_fetch",
      "web_fetch",
      "require",
      "builtin_exception",
    ],
    [
      "an override beats the built-in exception",
      { overrides: { "skill.run_skill_script": "auto" } },
      "skill",
      "run_skill_script",
      "auto",
      "kind_and_name",
    ],
    [
      "the default applies last",
      { default: "require", overrides: {} },
      "todo",
      "todo_write",
      "require",
      "default",
    ],
    ["omitted approval: shell requires", {}, "shell", "bash", "require", "kind"],
    ["omitted approval: writes require", {}, "filesystem.write", "edit_file", "require", "kind"],
    ["omitted approval: todo skips", {}, "todo", "todo_write", "skip", "kind"],
    ["omitted approval: reads are auto", {}, "filesystem.read", "read_file", "auto", "default"],
  ])("%s", (_t, input, kind, name, level, rule) => {
    expect(approvalLevel(approval(input), { kind, name })).toMatchObject({ level, rule });
  });
});

describe("safety rules and approval modes", () => {
  const requireAll = approval({ default: "require", overrides: {} });
  const skipAll = approval({ default: "skip", overrides: {} });
  it.each<
    [
      string,
      ReturnType<typeof approval>,
      Parameters<typeof decideApproval>[0]["target"],
      "manual" | "auto" | "bypass",
      string,
      string,
    ]
  >([
    ["auto level runs", skipAll, { type: "other" }, "manual", "run", "level_allows"],
    [
      "require asks a person in manual mode",
      requireAll,
      { type: "other" },
      "manual",
      "ask",
      "level_requires",
    ],
    ["require asks the judge in auto mode", requireAll, { type: "other" }, "auto", "judge", "level_requires"],
    ["require runs in bypass mode", requireAll, { type: "other" }, "bypass", "run", "level_requires"],
    [
      "reading .env always requires approval",
      skipAll,
      { type: "read", path: "/p/.env" },
      "manual",
      "ask",
      "sensitive_target",
    ],
    [
      "writing a private key always requires approval",
      skipAll,
      { type: "write", path: "/home/u/.ssh/id_ed25519", insideGitRepository: true },
      "auto",
      "judge",
      "sensitive_target",
    ],
    [
      "a shell command touching credentials requires approval",
      skipAll,
      { type: "shell", command: "cat ~/.aws/credentials" },
      "manual",
      "ask",
      "sensitive_target",
    ],
    [
      "a redirection into .env requires approval",
      skipAll,
      { type: "shell", command: "echo X=1 >> .env.local" },
      "manual",
      "ask",
      "sensitive_target",
    ],
    [
      "a known-safe read-only command runs",
      requireAll,
      { type: "shell", command: "git status && ls -la src | head" },
      "manual",
      "run",
      "safe_read_only_command",
    ],
    [
      "a write inside the repository runs",
      requireAll,
      { type: "write", path: "/repo/src/a.ts", insideGitRepository: true },
      "manual",
      "run",
      "safe_repository_write",
    ],
    [
      "a write outside the repository asks",
      requireAll,
      { type: "write", path: "/tmp/a.ts", insideGitRepository: false },
      "manual",
      "ask",
      "level_requires",
    ],
    [
      "a sensitive target still runs under bypass",
      skipAll,
      { type: "read", path: "/p/.env" },
      "bypass",
      "run",
      "sensitive_target",
    ],
  ])("%s", (_t, a, target, mode, action, reason) => {
    expect(
      decideApproval({ approval: a, tool: { kind: "shell", name: "bash" }, target, mode }),
    ).toMatchObject({ action, reason });
  });

  it.each([
    [".env", true],
    ["config/.env.production", true],
    [".env.example", false],
    ["prod.env", true],
    ["id_rsa", true],
    ["/home/u/.ssh/id_rsa.pub", false],
    ["/home/u/.ssh/config", true],
    ["server.pem", true],
    ["tls.key", true],
    [".npmrc", true],
    ["src/env.ts", false],
    ["README.md", false],
    [".git-credentials", true],
  ])("isSensitivePath(%s) is %s", (path, expected) => {
    expect(isSensitivePath(path)).toBe(expected);
  });

  it.each([
    ["ls -la", true],
    ["git status", true],
    ["git log --oneline | head -5", true],
    ["rg foo src", true],
    ["git push", false],
    ["git -c core.pager=x log", false],
    ["git diff --output=x", false],
    ["rg --pre cat foo", false],
    ["sort -o out.txt in.txt", false],
    ["ls > out", false],
    ["echo $(rm -rf /)", false],
    ["python x.py", false],
    ["cat 'unclosed", false],
    ["FOO=1 ls", false],
    ["git branch -D main", false],
    ["git branch new", false],
    ["", false],
  ])("isSafeReadOnlyCommand(%j) is %s", (command, expected) => {
    expect(isSafeReadOnlyCommand(command)).toBe(expected);
  });
});
