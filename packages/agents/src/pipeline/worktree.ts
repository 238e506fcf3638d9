import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { execa } from "execa";
import { NodeFailure } from "./codes";

/** A node's own git worktree: where it is, its branch, and the repository it belongs to. */
export interface NodeWorktree {
  readonly repository: string;
  readonly path: string;
  readonly branch: string;
}

async function git(cwd: string, args: readonly string[], extraEnv: Record<string, string> = {}) {
  const result = await execa("git", args, {
    cwd,
    reject: false,
    env: { ...extraEnv, GIT_TERMINAL_PROMPT: "0" },
    stdin: "ignore",
  });
  return { ok: result.exitCode === 0, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The top of the git work tree `dir` is in, or null (not a repository, or no git). */
export async function repositoryOf(dir: string): Promise<string | null> {
  try {
    const r = await git(dir, ["rev-parse", "--show-toplevel"]);
    return r.ok ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}

/** A branch name from the run and node ids: characters git refuses in a ref become `-`. */
function nodeBranch(runId: string, nodeId: string): string {
  const clean = (s: string) =>
    s
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .replace(/\.{2,}/g, "-")
      .replace(/^[.-]+|[.]+$/g, "")
      .replace(/\.lock$/, "-lock") || "x";
  return `icode/${clean(runId)}/${clean(nodeId)}`;
}

/**
 * The node's worktree under `<runDir>/nodes/<node id>/worktree` on branch `icode/<run id>/<node id>`:
 * created from the repository's `HEAD` on the node's first attempt, taken again as it is on a retry.
 */
export async function ensureWorktree(options: {
  repository: string;
  runDir: string;
  runId: string;
  nodeId: string;
}): Promise<NodeWorktree> {
  const path = join(options.runDir, "nodes", options.nodeId, "worktree");
  const branch = nodeBranch(options.runId, options.nodeId);
  if (existsSync(join(path, ".git"))) return { repository: options.repository, path, branch };
  mkdirSync(dirname(path), { recursive: true });
  const exists = await git(options.repository, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]);
  const args = exists.ok
    ? ["worktree", "add", path, branch]
    : ["worktree", "add", "-b", branch, path, "HEAD"];
  const added = await git(options.repository, args);
  if (!added.ok) {
    throw new NodeFailure(
      "pipeline_node_isolate_failed",
      `git worktree add for node "${options.nodeId}" failed: ${added.stderr.trim() || "no output"}`,
    );
  }
  return { repository: options.repository, path, branch };
}

/** Where `cwd` (inside `repository`) is in the worktree. */
export function placeInWorktree(tree: NodeWorktree, cwd: string): string {
  const rel = relative(tree.repository, cwd);
  return rel === "" || rel.startsWith("..") || rel.split(sep)[0] === ".." ? tree.path : join(tree.path, rel);
}

/**
 * Commits everything the attempt changed in the worktree on its branch (untracked files included) and
 * returns the changed files, relative to the worktree's top; nothing to commit returns `[]`. The commit
 * uses the repository's configured identity, or `iCode <icode@localhost>` when there is none.
 */
export async function commitWorktree(tree: NodeWorktree, message: string): Promise<string[]> {
  const fail = (what: string, stderr: string) =>
    new NodeFailure(
      "pipeline_node_isolate_failed",
      `${what} in the worktree ${tree.path} failed: ${stderr.trim() || "no output"}`,
    );
  const added = await git(tree.path, ["add", "-A"]);
  if (!added.ok) throw fail("git add", added.stderr);
  const names = await git(tree.path, ["diff", "--cached", "--name-only", "-z"]);
  if (!names.ok) throw fail("git diff", names.stderr);
  const files = names.stdout.split("\0").filter((f) => f !== "");
  if (files.length === 0) return [];
  const identity = await git(tree.path, ["config", "--get", "user.email"]);
  const env: Record<string, string> = identity.ok
    ? {}
    : {
        GIT_AUTHOR_NAME: "iCode",
        GIT_AUTHOR_EMAIL: "icode@localhost",
        GIT_COMMITTER_NAME: "iCode",
        GIT_COMMITTER_EMAIL: "icode@localhost",
      };
  const committed = await git(tree.path, ["commit", "--no-verify", "-q", "-m", message], env);
  if (!committed.ok) throw fail("git commit", committed.stderr || committed.stdout);
  return files;
}
