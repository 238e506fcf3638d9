import type { ShellFilter } from "@icode/agent-profiles";
import { checkShellCommand } from "@icode/agent-profiles/policy";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import type { FoundShell } from "./find-shell";
import { describeProcess, runProcess } from "./run-process";

/** Seconds a command may run when the call gives no `timeout_seconds`, and at most. */
const SHELL_DEFAULT_TIMEOUT_SECONDS = 120;
const SHELL_MAX_TIMEOUT_SECONDS = 600;

const ShellInput = z.strictObject({
  command: z.string().min(1).describe("The command line to run"),
  timeout_seconds: z
    .number()
    .positive()
    .max(SHELL_MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(`Stop the command after this many seconds (default ${SHELL_DEFAULT_TIMEOUT_SECONDS})`),
});

export interface ShellToolOptions {
  shell: FoundShell;
  /** `tools.shell_filter` of the profile; checked before any process starts. */
  filter: ShellFilter | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Stop functions of running commands, for the toolset's `close()`. */
  running: Set<() => Promise<void>>;
}

/**
 * The `shell` kind's tool, named after the shell found (`bash`, `zsh`, `sh`, …). A command first passes
 * `tools.shell_filter` (`checkShellCommand`): a blocked one is a tool error and no process starts. Then it
 * runs in the working directory through the shell (a fresh one per call: `cd` does not carry over), with
 * the engine's environment, no stdin, a timeout that kills everything it started, and its output cut to
 * 30,000 characters. A non-zero exit is a tool error that carries the output.
 */
export function shellTool(options: ShellToolOptions): AgentTool {
  const { shell } = options;
  return defineTool({
    name: shell.name,
    kind: "shell",
    activityKind: "execute",
    description:
      `Run a command line with ${shell.name} in the working directory and return its exit code and output ` +
      `(stdout and stderr). Each call starts a new shell; there is no stdin.`,
    input: ShellInput,
    title: (input) => `${shell.name}: ${brief(input.command)}`,
    target: (input) => ({ type: "shell", command: input.command }),
    async execute(input, context) {
      const check = checkShellCommand(options.filter, input.command);
      if (!check.allowed) {
        return toolError(
          `the shell filter of this agent blocks this command (${check.reason}); it was not run. ` +
            `Use an allowed command instead.`,
        );
      }
      const timeoutMs = (input.timeout_seconds ?? SHELL_DEFAULT_TIMEOUT_SECONDS) * 1000;
      const result = await runProcess(
        {
          file: shell.path,
          args: shell.args(input.command),
          cwd: context.cwd,
          env: options.env,
          timeoutMs,
          signal: context.signal,
        },
        options.running,
      );
      if (result.status === "spawn_failed")
        return toolError(`${shell.name} could not start: ${result.message}`);
      const text = describeProcess(result, timeoutMs);
      return result.status === "exited" && result.exitCode === 0
        ? { ok: true, output: text }
        : toolError(text);
    },
  });
}
