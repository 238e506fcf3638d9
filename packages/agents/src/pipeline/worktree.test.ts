import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpDir } from "@icode/test-utils";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { commitWorktree, ensureWorktree, placeInWorktree, repositoryOf } from "./worktree";

async function repo() {
  const dir = tmpDir("worktree-");
  const git = (...args: string[]) => execa("git", args, { cwd: dir });
  await git("init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "a\n");
  await git("add", "-A");
  await git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base");
  return { dir, git };
}

describe("node worktrees (real git)", () => {
  it("makes a worktree on a sanitized branch, takes it again on a retry, and commits without an identity", async () => {
    const { dir, git } = await repo();
    const runDir = tmpDir("worktree-run-");
    expect(await repositoryOf(dir)).toBe(await repositoryOf(join(dir, ".")));
    expect(await repositoryOf(runDir)).toBeNull();
    const tree = await ensureWorktree({ repository: dir, runDir, runId: "run 1/..x", nodeId: "fix" });
    expect(tree.branch).toBe("icode/run-1--x/fix");
    expect(tree.path).toBe(join(runDir, "nodes", "fix", "worktree"));
    expect(existsSync(join(tree.path, "a.txt"))).toBe(true);
    writeFileSync(join(tree.path, "b.txt"), "b\n");
    // No identity anywhere: the commit falls back to iCode <icode@localhost>.
    process.env["GIT_CONFIG_GLOBAL"] = join(runDir, "no-gitconfig");
    try {
      expect(await commitWorktree(tree, "first")).toEqual(["b.txt"]);
    } finally {
      delete process.env["GIT_CONFIG_GLOBAL"];
    }
    const log = await git("log", "--format=%an <%ae> %s", tree.branch);
    expect(log.stdout.split("\n")[0]).toBe("iCode <icode@localhost> first");
    expect(await commitWorktree(tree, "nothing")).toEqual([]);
    const again = await ensureWorktree({ repository: dir, runDir, runId: "run 1/..x", nodeId: "fix" });
    expect(again).toEqual(tree);
    expect(placeInWorktree(tree, join(dir, "src", "x"))).toBe(join(tree.path, "src", "x"));
    expect(placeInWorktree(tree, dir)).toBe(tree.path);
  });
});
