import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ShellFilter } from "@icode/agent-profiles";
import { processRunning, tmpDir, waitUntil } from "@icode/test-utils";
import { beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../tool";
import { findShell } from "./find-shell";
import { PROCESS_MAX_OUTPUT_CHARS, runProcess } from "./run-process";
import { shellTool } from "./shell";

let cwd: string;
let context: ToolContext;
const env = { PATH: process.env["PATH"], HOME: process.env["HOME"], FROM_ENGINE: "yes" };
beforeEach(() => {
  cwd = realpathSync(tmpDir());
  context = { cwd, signal: new AbortController().signal, toolCallId: "call-1" };
});

const filter = (fields: Partial<ShellFilter>): ShellFilter => ({
  preset: "",
  mode: "whitelist",
  commands: [],
  allow_redirections: true,
  allow_subshells: true,
  ...fields,
});

function tool(shellFilter?: ShellFilter, running = new Set<() => Promise<void>>()) {
  return shellTool({ shell: findShell(env), filter: shellFilter, env, running });
}

describe("findShell", () => {
  it("takes $SHELL when it is bash, zsh or sh, else bash or sh on PATH", () => {
    const bash = findShell({ PATH: process.env["PATH"] });
    expect(bash.name).toBe("bash");
    expect(bash.args("ls")).toEqual(["-c", "ls"]);
    expect(findShell({ SHELL: "/bin/sh", PATH: process.env["PATH"] })).toMatchObject({
      name: "sh",
      path: "/bin/sh",
    });
    expect(findShell({ SHELL: "/no/such/zsh", PATH: process.env["PATH"] }).name).toBe("bash");
    expect(findShell({ PATH: "" })).toMatchObject({ name: "sh", path: "/bin/sh" });
  });

  it("on Windows prefers pwsh, then powershell, then cmd", () => {
    const dir = tmpDir();
    writeFileSync(join(dir, "pwsh.EXE"), "");
    chmodSync(join(dir, "pwsh.EXE"), 0o755);
    const pwsh = findShell({ PATH: dir, PATHEXT: ".EXE" }, "win32");
    expect(pwsh).toMatchObject({ name: "pwsh", path: join(dir, "pwsh.EXE") });
    expect(pwsh.args("dir")).toEqual(["-NoProfile", "-NonInteractive", "-Command", "dir"]);
    const cmd = findShell({ PATH: "", ComSpec: "C:\\Windows\\system32\\cmd.exe" }, "win32");
    expect(cmd).toMatchObject({ name: "cmd", path: "C:\\Windows\\system32\\cmd.exe" });
    expect(cmd.args("dir")).toEqual(["/d", "/s", "/c", "dir"]);
  });
});

describe("the shell tool", () => {
  it("is named after the shell, runs in the working directory with the engine's environment only", async () => {
    const bash = tool();
    expect(bash.name).toBe("bash");
    expect(bash.kind).toBe("shell");
    expect(bash.target?.({ command: "ls -la" }, context)).toEqual({ type: "shell", command: "ls -la" });
    process.env["ICODE_ONLY_IN_THE_TEST_PROCESS"] = "leaked";
    const out = await bash.execute(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
      { command: 'pwd; echo "$FROM_ENGINE ${ICODE_ONLY_IN_THE_TEST_PROCESS:-not-inherited}"' },
      context,
    );
    delete process.env["ICODE_ONLY_IN_THE_TEST_PROCESS"];
    expect(out).toEqual({ ok: true, output: `exit code 0\n${cwd}\nyes not-inherited\n` });
  });

  it("reports a non-zero exit as a tool error carrying stdout and stderr", async () => {
    const out = await tool().execute({ command: "echo out; echo err >&2; exit 3" }, context);
    expect(out).toEqual({ ok: false, error: expect.stringMatching(/^exit code 3\n/) });
    expect(!out.ok && out.error).toContain("out\n");
    expect(!out.ok && out.error).toContain("err\n");
  });

  it("cuts long output in the middle and says how much was left out", async () => {
    const out = await tool().execute(
      { command: "head -c 100000 /dev/zero | tr '\\0' x; echo; echo END" },
      context,
    );
    expect(out.ok).toBe(true);
    const text = out.ok ? out.output : "";
    expect(text.length).toBeLessThan(PROCESS_MAX_OUTPUT_CHARS + 200);
    expect(text).toMatch(/\[… \d+ characters of output left out …\]/);
    expect(text.trimEnd().endsWith("END")).toBe(true);
  });

  it("kills a command that runs past its timeout, with what it started", async () => {
    const out = await tool().execute(
      { command: "sleep 300 & echo $! > child.pid; wait", timeout_seconds: 0.5 },
      context,
    );
    expect(out).toEqual({
      ok: false,
      error: expect.stringMatching(/^timed out after 0\.5 s and was killed/),
    });
    const pid = Number(readFileSync(join(cwd, "child.pid"), "utf8"));
    expect(await waitUntil(() => !processRunning(pid), 10_000)).toBe(true);
  });

  it("stops when the call is cancelled", async () => {
    const controller = new AbortController();
    const call = tool().execute(
      { command: "touch started; sleep 300" },
      { ...context, signal: controller.signal },
    );
    expect(await waitUntil(() => existsSync(join(cwd, "started")), 10_000)).toBe(true);
    controller.abort();
    expect(await call).toEqual({ ok: false, error: expect.stringMatching(/^was cancelled and killed/) });
  });
});

describe("the shell filter", () => {
  it("blocks a command before any process starts: the file it would create never appears", async () => {
    const readOnly = tool(filter({ preset: "read_only" }));
    for (const command of [
      "touch created.txt",
      "ls > created.txt",
      "echo $(touch created.txt)",
      "ls && touch created.txt",
    ]) {
      const out = await readOnly.execute({ command }, context);
      expect(out).toEqual({
        ok: false,
        error: expect.stringContaining("the shell filter of this agent blocks this command"),
      });
    }
    expect(existsSync(join(cwd, "created.txt"))).toBe(false);
    expect(await readOnly.execute({ command: "ls" }, context)).toMatchObject({ ok: true });
  });

  it("applies a custom whitelist segment by segment, and a blacklist", async () => {
    mkdirSync(join(cwd, "d"));
    const allowList = tool(filter({ commands: ["ls", "echo"] }));
    expect(await allowList.execute({ command: "echo a | ls" }, context)).toMatchObject({ ok: true });
    expect(await allowList.execute({ command: "echo a | touch made" }, context)).toMatchObject({ ok: false });
    const denyList = tool(filter({ mode: "blacklist", commands: ["rm"] }));
    expect(await denyList.execute({ command: "rm -r d" }, context)).toMatchObject({ ok: false });
    expect(await denyList.execute({ command: "/bin/rm -r d" }, context)).toMatchObject({ ok: false });
    expect(existsSync(join(cwd, "d"))).toBe(true);
    expect(existsSync(join(cwd, "made"))).toBe(false);
  });
});

describe("runProcess", () => {
  it("ends a running command for the toolset's close(), and reports a program that cannot start", async () => {
    const running = new Set<() => Promise<void>>();
    const result = runProcess(
      { file: "/bin/sh", args: ["-c", "sleep 300"], cwd, env, timeoutMs: 600_000, signal: context.signal },
      running,
    );
    expect(await waitUntil(() => running.size === 1, 10_000)).toBe(true);
    await Promise.all([...running].map((stop) => stop()));
    expect(await result).toMatchObject({ status: "cancelled" });
    expect(running.size).toBe(0);
    expect(
      await runProcess({
        file: join(cwd, "missing"),
        args: [],
        cwd,
        env,
        timeoutMs: 1000,
        signal: context.signal,
      }),
    ).toMatchObject({ status: "spawn_failed", message: expect.stringContaining("ENOENT") });
  });
});
