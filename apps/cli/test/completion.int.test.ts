/**
 * `icode completion bash|zsh|fish` (issue 17, item 20): the bash script is loaded into a real bash and asked
 * for completions as the shell would ask (COMP_WORDS / COMP_CWORD); it completes commands, options, option
 * values and workflow IDs (from `icode workflow list --json`), sessions and runs. The zsh and fish scripts
 * are checked for what they cover, and run by zsh and fish where those shells are installed.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_BIN, ECHO_WORKFLOW } from "@icode/test-utils";
import { beforeAll, describe, expect, it } from "vitest";
import { icode, type Project, project, runJson, SLOW } from "./run-helpers";

const has = (shell: string) => {
  try {
    execFileSync(shell, ["-c", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

describe("icode completion", SLOW, () => {
  let p: Project;
  let bin: string;
  let script: string;
  let sessionId: string;
  let runId: string;

  beforeAll(async () => {
    p = project({
      ".chrys/workflows/summarise.py": ECHO_WORKFLOW,
      ".chrys/workflows/sum-up.py": ECHO_WORKFLOW,
    });
    // `icode` on PATH, as the completion scripts call it.
    bin = join(p.dir, "bin");
    execFileSync("mkdir", ["-p", bin]);
    writeFileSync(join(bin, "icode"), `#!/bin/sh\nexec "${process.execPath}" "${CLI_BIN}" "$@"\n`);
    chmodSync(join(bin, "icode"), 0o755);
    const r = await icode(p, ["completion", "bash"]);
    expect(r.exitCode, r.stderr).toBe(0);
    script = join(p.dir, "icode.bash");
    writeFileSync(script, r.stdout);
    const ran = await runJson(p, "echo", ["--input", "x"]);
    sessionId = ran.json.session_id!;
    runId = ran.json.run_id;
  }, SLOW.timeout);

  /** What bash completes for the words typed so far (the last one is being typed). */
  function complete(...words: string[]): string[] {
    const array = ["icode", ...words].map((w) => `'${w}'`).join(" ");
    const out = execFileSync(
      "bash",
      [
        "-c",
        `source '${script}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length}; _icode; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { cwd: p.dir, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CHRYS_HOME: p.home } },
    ).toString();
    return out.split("\n").filter((line) => line !== "");
  }

  it("bash: completes groups, commands and options", () => {
    expect(complete("")).toEqual(
      expect.arrayContaining(["workflow", "runs", "sessions", "trajectory", "completion", "--version"]),
    );
    expect(complete("wor")).toEqual(["workflow"]);
    expect(complete("workflow", "")).toEqual(["list", "validate", "run", "--help"]);
    expect(complete("workflow", "run", "summarise", "--inp")).toEqual(["--input", "--input-file"]);
    expect(complete("runs", "list", "-")).toEqual(["-s", "--session", "--json", "-h", "--help"]);
    expect(complete("trajectory", "export", "--format", "")).toEqual(["json", "perfetto"]);
    expect(complete("completion", "")).toEqual(["bash", "zsh", "fish"]);
    // `icode agents` is `icode agents list`: its options complete right after the group too.
    expect(complete("agents", "")).toEqual(["list", "--json", "--help"]);
    expect(complete("models", "list", "-")).toEqual(["--json", "-h", "--help"]);
  });

  it("bash: completes workflow IDs from icode workflow list --json, sessions and runs", () => {
    expect(complete("workflow", "run", "sum")).toEqual(["sum-up", "summarise"]);
    expect(complete("workflow", "run", "")).toEqual(expect.arrayContaining(["echo", "summarise", "sum-up"]));
    expect(complete("workflow", "run", "echo", "-s", "")).toEqual([sessionId]);
    expect(complete("runs", "show", "")).toEqual([runId]);
    expect(complete("trajectory", "export", "--session", "")).toEqual([sessionId]);
  });

  it("bash: completes pipeline commands, their options and stored pipeline IDs (pipeline list --json)", async () => {
    expect(complete("pip")).toEqual(["pipeline"]);
    expect(complete("pipeline", "")).toEqual([
      "list",
      "show",
      "validate",
      "import",
      "export",
      "publish",
      "copy",
      "delete",
      "run",
      "runs",
      "inspect",
      "approve",
      "retry",
      "skip",
      "pause",
      "resume",
      "cancel",
      "stop-sessions",
      "--help",
    ]);
    expect(complete("pipeline", "run", "x", "--failure-policy", "")).toEqual([
      "pause",
      "fail_fast",
      "continue",
    ]);
    expect(complete("pipeline", "inspect", "")).toEqual([]);
    expect(complete("pipeline", "list", "--status", "")).toEqual(["draft", "published"]);
    expect(complete("pipeline", "publish", "x", "--exp")).toEqual(["--expected-revision"]);
    expect(complete("pipeline", "show", "builtin/re")).toEqual(["builtin/review-fan-out"]);
    expect(complete("pipeline", "copy", "")).toEqual([
      "builtin/docs-and-tests",
      "builtin/plan-implement-review",
      "builtin/review-fan-out",
    ]);
  });

  it("zsh and fish: scripts that cover every command and option", async () => {
    const zsh = await icode(p, ["completion", "zsh"]);
    expect(zsh.exitCode).toBe(0);
    expect(zsh.stdout).toContain("bashcompinit");
    expect(zsh.stdout).toContain("complete -o default -F _icode icode");
    const fish = await icode(p, ["completion", "fish"]);
    expect(fish.exitCode).toBe(0);
    for (const [group, command] of [
      ["workflow", "run"],
      ["runs", "logs"],
      ["sessions", "list"],
      ["trajectory", "export"],
      ["pipeline", "publish"],
    ]) {
      expect(fish.stdout).toContain(`-a ${command} -d`);
      expect(fish.stdout).toContain(`-n __fish_use_subcommand -a ${group} -d`);
    }
    expect(fish.stdout).toContain("-l input-file -r -F");
    expect(fish.stdout).toContain("(__icode_ids id workflow list --json)");
    expect(fish.stdout).toContain("(__icode_ids id pipeline list --json)");
  });

  it.runIf(has("zsh"))("zsh loads its script", () => {
    const out = execFileSync("zsh", ["-c", `source <(icode completion zsh) && echo loaded`], {
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CHRYS_HOME: p.home },
    }).toString();
    expect(out.trim()).toBe("loaded");
  });

  it.runIf(has("fish"))("fish completes workflow IDs with its script", () => {
    const out = execFileSync(
      "fish",
      ["-c", `icode completion fish | source; complete -C 'icode workflow run sum'`],
      { cwd: p.dir, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CHRYS_HOME: p.home } },
    ).toString();
    expect(out).toContain("summarise");
  });
});
