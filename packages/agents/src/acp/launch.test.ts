import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AcpSettings, AgentProfileFileSchema } from "@icode/agent-profiles";
import { tmpDir } from "@icode/test-utils";
import { isWorkflowError } from "@icode/workflow-errors";
import { describe, expect, it } from "vitest";
import { childEnvironment, resolveLaunch } from "./launch";

/** `acp` as the profile loader reads it, defaults filled. */
const AcpSchema = {
  parse: (acp: Record<string, unknown>): AcpSettings =>
    AgentProfileFileSchema.parse({ name: "A", acp: acp as { command?: string } }).acp!,
};

function workspace(): string {
  const dir = tmpDir("acp-launch-");
  mkdirSync(join(dir, "work", "sub"), { recursive: true });
  return join(dir, "work");
}

function startError(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (isWorkflowError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a start error");
}

describe("childEnvironment", () => {
  it("keeps only the POSIX base variables, adds acp.env, and sets the depth to the engine's plus one", () => {
    const env = childEnvironment(
      { HOME: "/h", PATH: "/bin", USER: "u", SECRET: "s", OPENAI_API_KEY: "k", TERM: "xterm" },
      { AGENT_KEY: "v" },
      "linux",
    );
    expect(env).toEqual({
      HOME: "/h",
      PATH: "/bin",
      USER: "u",
      TERM: "xterm",
      AGENT_KEY: "v",
      CHRYS_ACP_SUBAGENT_DEPTH: "1",
    });
  });

  it("counts depth from the engine's own CHRYS_ACP_SUBAGENT_DEPTH, ignoring a value that is not a count", () => {
    expect(childEnvironment({ CHRYS_ACP_SUBAGENT_DEPTH: "2" }, {}, "linux")["CHRYS_ACP_SUBAGENT_DEPTH"]).toBe(
      "3",
    );
    expect(childEnvironment({ CHRYS_ACP_SUBAGENT_DEPTH: "x" }, {}, "linux")["CHRYS_ACP_SUBAGENT_DEPTH"]).toBe(
      "1",
    );
    expect(
      childEnvironment({ CHRYS_ACP_SUBAGENT_DEPTH: "-4" }, {}, "linux")["CHRYS_ACP_SUBAGENT_DEPTH"],
    ).toBe("1");
  });

  it("uses the Windows list there, looking names up ignoring case", () => {
    const env = childEnvironment(
      { Path: "C:\\bin", SystemRoot: "C:\\Windows", USERPROFILE: "C:\\u", HOME: "/h", SECRET: "s" },
      {},
      "win32",
    );
    expect(env).toEqual({
      PATH: "C:\\bin",
      SYSTEMROOT: "C:\\Windows",
      USERPROFILE: "C:\\u",
      CHRYS_ACP_SUBAGENT_DEPTH: "1",
    });
  });

  it("lets acp.env override a base variable", () => {
    expect(childEnvironment({ PATH: "/bin" }, { PATH: "/opt/agent/bin" }, "linux")["PATH"]).toBe(
      "/opt/agent/bin",
    );
  });
});

describe("resolveLaunch", () => {
  const env = { PATH: "/bin", BIN: "my-agent", FLAG: "--acp", KEY: "k1", DIR: "sub", EMPTY: "" };

  it("resolves templates in command, args, env values and cwd", () => {
    const root = workspace();
    const acp = AcpSchema.parse({
      command: "{{BIN}}",
      args: ["{{FLAG}}", "plain"],
      env: { API_KEY: "{{KEY}}" },
      cwd: "{{DIR}}",
    });
    const launch = resolveLaunch({ acp, workspace: root, env, platform: "linux" });
    expect(launch).toEqual({
      command: "my-agent",
      args: ["--acp", "plain"],
      cwd: join(root, "sub"),
      env: { PATH: "/bin", API_KEY: "k1", CHRYS_ACP_SUBAGENT_DEPTH: "1" },
    });
  });

  it.each([
    ["command", { command: "{{NOPE}}" }],
    ["args", { command: "a", args: ["{{NOPE}}"] }],
    ["env", { command: "a", env: { X: "{{NOPE}}" } }],
    ["cwd", { command: "a", cwd: "{{NOPE}}" }],
    ["env (empty variable)", { command: "a", env: { X: "{{EMPTY}}" } }],
  ])("fails the start on a missing template in %s", (_field, written) => {
    const error = startError(() =>
      resolveLaunch({ acp: AcpSchema.parse(written), workspace: workspace(), env, platform: "linux" }),
    );
    expect(error.code).toBe("acp_start_failed");
    expect(error.message).toMatch(/\{\{(NOPE|EMPTY)\}\}/u);
  });

  it("fails on an empty command", () => {
    const error = startError(() =>
      resolveLaunch({ acp: AcpSchema.parse({}), workspace: workspace(), env, platform: "linux" }),
    );
    expect(error).toMatchObject({
      code: "acp_start_failed",
      message: expect.stringContaining("acp.command is empty"),
    });
  });

  it("keeps the cwd inside the workspace unless allow_external_cwd, following links", () => {
    const root = workspace();
    symlinkSync(join(root, ".."), join(root, "up"));
    for (const cwd of ["..", "/", "up"]) {
      const acp = AcpSchema.parse({ command: "a", cwd });
      expect(
        startError(() => resolveLaunch({ acp, workspace: root, env, platform: "linux" })).message,
      ).toContain("outside the session's working directory");
      const allowed = AcpSchema.parse({ command: "a", cwd, allow_external_cwd: true });
      expect(resolveLaunch({ acp: allowed, workspace: root, env, platform: "linux" }).cwd).toBeTruthy();
    }
    const inside = AcpSchema.parse({ command: "a", cwd: join(root, "sub") });
    expect(resolveLaunch({ acp: inside, workspace: root, env, platform: "linux" }).cwd).toBe(
      join(root, "sub"),
    );
  });

  it("fails when the cwd does not exist or is a file", () => {
    const root = workspace();
    writeFileSync(join(root, "file.txt"), "x");
    expect(
      startError(() =>
        resolveLaunch({
          acp: AcpSchema.parse({ command: "a", cwd: "nope" }),
          workspace: root,
          env,
          platform: "linux",
        }),
      ).message,
    ).toContain("does not exist");
    expect(
      startError(() =>
        resolveLaunch({
          acp: AcpSchema.parse({ command: "a", cwd: "file.txt" }),
          workspace: root,
          env,
          platform: "linux",
        }),
      ).message,
    ).toContain("is not a directory");
  });
});
