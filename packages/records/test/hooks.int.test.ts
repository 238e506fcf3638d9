import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir, tempDir } from "./helpers";
import {
  type HookInput,
  HookPayloadSchema,
  HookSchema,
  hooksFile,
  isProcessAlive,
  runHooks,
} from "./internals";

let root: string;
beforeEach(() => {
  root = tempDir();
});
afterEach(() => removeDir(root));

const NODE = process.execPath;
const env = { PATH: process.env["PATH"] };
const SESSION = "3f2b8c1e-6d4a-4b7e-9c1f-0a2b3c4d5e6f";
const RUN = "a".repeat(32);

function hooks(...list: HookInput[]) {
  return list.map((h) => HookSchema.parse(h));
}

/** A hook program that copies its stdin into `file`. */
function capture(file: string): string[] {
  return [NODE, "-e", "require('fs').writeFileSync(process.argv[1], require('fs').readFileSync(0))", file];
}

const endFields = {
  workflow_id: "demo",
  session_id: SESSION,
  cwd: "",
  run_id: RUN,
  outcome: "node_failed" as const,
  reason: "",
};

describe("lifecycle hooks with real commands", () => {
  it("passes each event as JSON on stdin with the base fields, runs in the session folder, only matching hooks", async () => {
    const out = join(root, "end.json");
    const startOut = join(root, "start.json");
    const cwdOut = join(root, "cwd.txt");
    const { warnings, background } = await runHooks(
      "workflow_run_end",
      { ...endFields, cwd: root },
      {
        env,
        hooks: hooks(
          { event: "workflow_run_end", command: capture(out), blocking: true },
          { event: "workflow_run_start", command: capture(startOut), blocking: true },
          { event: "workflow_run_end", command: `pwd > "${cwdOut}"`, blocking: true },
        ),
      },
    );
    expect(warnings).toEqual([]);
    expect(await background).toEqual([]);
    const payload = JSON.parse(readFileSync(out, "utf8"));
    expect(HookPayloadSchema.parse(payload)).toEqual(payload);
    expect(payload).toEqual({
      event: "workflow_run_end",
      session_kind: "workflow",
      workflow_id: "demo",
      session_id: SESSION,
      cwd: root,
      profile: "",
      run_id: RUN,
      outcome: "node_failed",
      reason: "",
    });
    expect(existsSync(startOut)).toBe(false);
    expect(readFileSync(cwdOut, "utf8").trim()).toBe(root);
  });

  it("sends the additional fields of every event", async () => {
    const cases = [
      ["session_start", {}],
      ["session_restored", { restored_session_id: SESSION }],
      ["session_end", {}],
      ["workflow_run_start", { run_id: RUN, input_text: "line 1\nline 2" }],
    ] as const;
    for (const [event, extra] of cases) {
      const out = join(root, `${event}.json`);
      const base = { workflow_id: "demo", session_id: SESSION, cwd: root };
      await runHooks(event, { ...base, ...extra } as never, {
        env,
        hooks: hooks({ event, command: capture(out), blocking: true }),
      });
      expect(JSON.parse(readFileSync(out, "utf8"))).toEqual({
        event,
        session_kind: "workflow",
        profile: "",
        ...base,
        ...extra,
      });
    }
  });

  it("kills a hook at its timeout, with what its shell started, and warns", async () => {
    const pidFile = join(root, "grandchild.pid");
    const started = Date.now();
    const { warnings } = await runHooks(
      "workflow_run_end",
      { ...endFields, cwd: root },
      {
        env,
        hooks: hooks({
          event: "workflow_run_end",
          command: `sleep 30 & echo $! > "${pidFile}"; wait`,
          timeout_seconds: 0.3,
          blocking: true,
        }),
      },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(warnings.map((w) => [w.code, w.hook])).toEqual([["hook_timeout", 0]]);
    expect(warnings[0]?.message).toMatch(/0\.3 s timeout and was killed/);
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it("does not wait for a process the hook left running with its output pipes", async () => {
    const pidFile = join(root, "background.pid");
    const { warnings } = await runHooks(
      "workflow_run_end",
      { ...endFields, cwd: root },
      {
        env,
        hooks: hooks({
          event: "workflow_run_end",
          command: `sleep 30 & echo $! > "${pidFile}"`,
          blocking: true,
        }),
      },
    );
    const background = Number(readFileSync(pidFile, "utf8"));
    try {
      expect(warnings).toEqual([]);
      // Returned while the process holding the hook's stdout and stderr still runs.
      expect(isProcessAlive(background)).toBe(true);
    } finally {
      process.kill(background, "SIGKILL");
    }
  });

  it("gives a hook exactly the environment it was given", async () => {
    const out = join(root, "env.json");
    process.env.ICODE_HOOK_TEST_ONLY_HERE = "1";
    try {
      await runHooks(
        "session_end",
        { workflow_id: "demo", session_id: SESSION, cwd: root },
        {
          env: { ...env, ICODE_GIVEN: "yes" },
          hooks: hooks({
            event: "session_end",
            command: [
              NODE,
              "-e",
              "require('fs').writeFileSync(process.argv[1], JSON.stringify(process.env))",
              out,
            ],
            blocking: true,
          }),
        },
      );
    } finally {
      delete process.env.ICODE_HOOK_TEST_ONLY_HERE;
    }
    const seen = JSON.parse(readFileSync(out, "utf8")) as Record<string, string>;
    expect(seen.ICODE_GIVEN).toBe("yes");
    expect(seen.ICODE_HOOK_TEST_ONLY_HERE).toBeUndefined();
  });

  it("turns a failing hook into a warning with its stderr, never an error, and honours on_error", async () => {
    const failing = [NODE, "-e", "console.error('cannot reach the server'); process.exit(3)"];
    const { warnings } = await runHooks(
      "session_end",
      { workflow_id: "demo", session_id: SESSION, cwd: root },
      {
        env,
        hooks: hooks(
          { event: "session_end", command: failing, blocking: true },
          { event: "session_end", command: failing, blocking: true, on_error: "ignore" },
          { event: "session_end", command: failing, blocking: true, on_error: "block" },
          { event: "session_end", command: [join(root, "no-such-program")], blocking: true },
        ),
      },
    );
    expect(warnings.map((w) => [w.code, w.hook])).toEqual([
      ["hook_failed", 0],
      ["hook_failed", 2],
      ["hook_spawn_failed", 3],
    ]);
    expect(warnings[0]?.message).toMatch(/exited with code 3; stderr: cannot reach the server/);
    expect(warnings[1]?.message).toMatch(/on_error "block" is a warning/);
  });

  it('ignores {"action": "block"} with a warning: workflow hooks never stop a run', async () => {
    const { warnings } = await runHooks(
      "workflow_run_start",
      { workflow_id: "demo", session_id: SESSION, cwd: root, run_id: RUN, input_text: "" },
      {
        env,
        hooks: hooks({
          event: "workflow_run_start",
          command: [NODE, "-e", "process.stdout.write(JSON.stringify({ action: 'block', reason: 'no' }))"],
          blocking: true,
        }),
      },
    );
    expect(warnings.map((w) => w.code)).toEqual(["hook_block_ignored"]);
  });

  it("does not wait for non-blocking hooks, which report through `background`", async () => {
    const marker = join(root, "late.txt");
    const { warnings, background } = await runHooks(
      "session_start",
      { workflow_id: "demo", session_id: SESSION, cwd: root },
      {
        env,
        hooks: hooks({
          event: "session_start",
          command: [
            NODE,
            "-e",
            "setTimeout(() => { require('fs').writeFileSync(process.argv[1], 'x'); process.exit(4) }, 300)",
            marker,
          ],
        }),
      },
    );
    expect(warnings).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    const late = await background;
    expect(existsSync(marker)).toBe(true);
    expect(late.map((w) => w.code)).toEqual(["hook_failed"]);
  });

  it("reads hooks.json from the configuration folder and reports a broken one as a warning", async () => {
    const home = join(root, "home");
    const out = join(root, "payload.json");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(home);
    writeFileSync(
      hooksFile(home),
      JSON.stringify({ hooks: [{ event: "session_end", command: capture(out), blocking: true }] }),
    );
    const fields = { workflow_id: "demo", session_id: SESSION, cwd: root };
    expect((await runHooks("session_end", fields, { env, chrysHome: home })).warnings).toEqual([]);
    expect(JSON.parse(readFileSync(out, "utf8")).event).toBe("session_end");

    writeFileSync(hooksFile(home), JSON.stringify({ hooks: [{ event: "session_end", comand: ["x"] }] }));
    const broken = await runHooks("session_end", fields, { env, chrysHome: home });
    expect(broken.warnings.map((w) => [w.code, w.hook])).toEqual([["hooks_config_invalid", null]]);
    expect(broken.warnings[0]?.message).toContain(hooksFile(home));
  });
});
