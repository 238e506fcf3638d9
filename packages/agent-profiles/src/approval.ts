import type { Approval, ApprovalLevel } from "./schema/agent-profile";
import { commandName, parseShell } from "./shell-parse";
import { isToolKind } from "./tool-kinds";

/** Which rule chose an approval level (agent-profiles.md 2.3, in precedence order). */
export type ApprovalRule = "kind_and_name" | "name" | "kind" | "builtin_exception" | "default";

export interface ToolRef {
  /** The tool's kind (`shell`, `filesystem.write`, `mcp`, …). */
  kind: string;
  /** The tool's name as the model sees it (`write_file`, `gh_search`). */
  name: string;
}

/**
 * The initial approval level of a tool call: `approval.overrides` by `kind.name`, then by name, then by
 * kind, then the built-in exceptions (`run_skill_script` and every `web_search` / `web_fetch` tool
 * require approval), then `approval.default`. A key equal to a kind always means the kind, so a tool named
 * like a kind is reached only as `kind.name`; `web_search` and `web_fetch` keys also match tools of that name.
 */
export function approvalLevel(
  approval: Approval,
  tool: ToolRef,
): { level: ApprovalLevel; rule: ApprovalRule; key: string | null } {
  const o = approval.overrides;
  const full = `${tool.kind}.${tool.name}`;
  if (Object.hasOwn(o, full)) return { level: o[full] as ApprovalLevel, rule: "kind_and_name", key: full };
  const nameIsKey = !isToolKind(tool.name) || tool.name === "web_search" || tool.name === "web_fetch";
  if (nameIsKey && Object.hasOwn(o, tool.name))
    return { level: o[tool.name] as ApprovalLevel, rule: "name", key: tool.name };
  if (Object.hasOwn(o, tool.kind))
    return { level: o[tool.kind] as ApprovalLevel, rule: "kind", key: tool.kind };
  if (tool.name === "run_skill_script" || tool.kind === "web_search" || tool.kind === "web_fetch") {
    return { level: "require", rule: "builtin_exception", key: null };
  }
  return { level: approval.default, rule: "default", key: null };
}

/** How calls that still need approval are decided: a person, the approval judge model, or nobody. */
export type ApprovalMode = "manual" | "auto" | "bypass";

/** What a call touches, for the safety rules; the caller knows whether a path is inside the Git repository. */
export type ApprovalTarget =
  | { type: "shell"; command: string }
  | { type: "read"; path: string }
  | { type: "write"; path: string; insideGitRepository: boolean }
  | { type: "other" };

export type ApprovalReason =
  | "level_allows"
  | "sensitive_target"
  | "safe_read_only_command"
  | "safe_repository_write"
  | "level_requires";

export interface ApprovalDecision {
  /** `run` directly, `ask` a person, or let the approval judge model `judge`. */
  action: "run" | "ask" | "judge";
  level: ApprovalLevel;
  rule: ApprovalRule;
  /** Whether the call needs approval after the safety rules. */
  required: boolean;
  reason: ApprovalReason;
}

/**
 * Decides a tool call: the level from `approvalLevel`, then the safety rules (sensitive targets always
 * require approval; known-safe read-only shell commands and non-sensitive writes inside the working
 * directory's Git repository may run directly), then the mode for what still requires approval: `manual`
 * asks, `auto` asks the judge model, `bypass` runs it (`icode workflow run` always uses `bypass`).
 */
export function decideApproval(input: {
  approval: Approval;
  tool: ToolRef;
  target?: ApprovalTarget;
  mode: ApprovalMode;
}): ApprovalDecision {
  const { level, rule } = approvalLevel(input.approval, input.tool);
  const target = input.target ?? { type: "other" };
  let required = level === "require";
  let reason: ApprovalReason = required ? "level_requires" : "level_allows";
  if (touchesSensitive(target)) {
    required = true;
    reason = "sensitive_target";
  } else if (required && target.type === "shell" && isSafeReadOnlyCommand(target.command)) {
    required = false;
    reason = "safe_read_only_command";
  } else if (required && target.type === "write" && target.insideGitRepository) {
    required = false;
    reason = "safe_repository_write";
  }
  const action = !required || input.mode === "bypass" ? "run" : input.mode === "manual" ? "ask" : "judge";
  return { action, level, rule, required, reason };
}

const SENSITIVE_NAMES = new Set([
  ".env",
  ".netrc",
  "_netrc",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  "credentials",
  "credentials.json",
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  ".htpasswd",
  "secrets.yaml",
  "secrets.yml",
  "secrets.json",
]);
const SENSITIVE_EXTENSIONS = [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".env"];
const ENV_EXAMPLES = /^\.env\.(example|sample|template|dist)$/u;
const SENSITIVE_DIRS = [".ssh", ".gnupg", ".aws", ".kube", ".docker"];

/**
 * True for `.env` files, credential files and private keys (ours: the names above, `.env.*` except
 * `.env.example` and the like, `*.pem`, `*.key`, …, and anything in `.ssh`, `.gnupg`, `.aws`, `.kube` or
 * `.docker` except public keys).
 */
export function isSensitivePath(path: string): boolean {
  const parts = path.split(/[\\/]+/u).filter((p) => p !== "");
  const base = parts.at(-1) ?? "";
  if (ENV_EXAMPLES.test(base)) return false;
  if (SENSITIVE_NAMES.has(base) || base.startsWith(".env.")) return true;
  if (SENSITIVE_EXTENSIONS.some((e) => base.endsWith(e) && base.length > e.length)) return true;
  if (parts.slice(0, -1).some((p) => SENSITIVE_DIRS.includes(p))) return !base.endsWith(".pub");
  return false;
}

function touchesSensitive(target: ApprovalTarget): boolean {
  if (target.type === "read" || target.type === "write") return isSensitivePath(target.path);
  if (target.type !== "shell") return false;
  const parsed = parseShell(target.command);
  const words = [
    ...parsed.segments.flatMap((s) => [...s.words, ...s.redirections.map((r) => r.target)]),
    ...parsed.substitutions.flatMap((inner) => parseShell(inner).segments.flatMap((s) => s.words)),
  ];
  return words.some((w) => w.split(/[=:]/u).some((part) => isSensitivePath(part)));
}

/** Read-only commands safe to run without approval, with the flags that would make them write or run code. */
const SAFE_COMMANDS: Readonly<Record<string, readonly string[]>> = {
  ls: [],
  pwd: [],
  cat: [],
  head: [],
  tail: ["-f", "--follow"],
  wc: [],
  echo: [],
  which: [],
  file: [],
  stat: [],
  du: [],
  df: [],
  diff: [],
  uniq: [],
  cut: [],
  basename: [],
  dirname: [],
  realpath: [],
  date: ["-s", "--set"],
  uname: [],
  whoami: [],
  grep: [],
  rg: ["--pre", "--pre-glob"],
  sort: ["-o", "--output"],
  tree: ["-o"],
};
const SAFE_GIT = new Set([
  "status",
  "log",
  "diff",
  "show",
  "rev-parse",
  "ls-files",
  "blame",
  "branch",
  "describe",
]);
const GIT_UNSAFE_FLAGS = [
  "--output",
  "--ext-diff",
  "--textconv",
  "-D",
  "-d",
  "-m",
  "-M",
  "--delete",
  "--move",
  "--set-upstream-to",
];

/**
 * True when every command of the line is a known read-only command (ours: the list above, and `git` with a
 * read-only subcommand and no option before it), with no redirection, substitution or unclosed quote.
 */
export function isSafeReadOnlyCommand(command: string): boolean {
  const parsed = parseShell(command);
  if (parsed.unterminated || parsed.redirects || parsed.subshells || parsed.segments.length === 0)
    return false;
  return parsed.segments.every((segment) => {
    const found = commandName(segment);
    if (found === null || found.index > 0) return false;
    const args = segment.words.slice(1);
    const flagged = (bad: readonly string[]) =>
      args.some((a) =>
        bad.some((b) => a === b || a.startsWith(`${b}=`) || (b.startsWith("--") && a.startsWith(b))),
      );
    if (found.name === "git") {
      const sub = args[0];
      if (sub === undefined || !SAFE_GIT.has(sub)) return false;
      return (
        !flagged(GIT_UNSAFE_FLAGS) &&
        !(sub === "branch" && args.length > 1 && args.slice(1).some((a) => !a.startsWith("-")))
      );
    }
    const bad = SAFE_COMMANDS[found.name];
    return bad !== undefined && !flagged(bad);
  });
}
