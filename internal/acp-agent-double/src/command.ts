import { fileURLToPath } from "node:url";
import { LOG_ENV, SCRIPT_ENV } from "./script-file";

/** The built agent executable (`pnpm --filter @icode/acp-agent-double build` makes it). */
export const AGENT_BIN = fileURLToPath(new URL("../dist/agent.js", import.meta.url));

/** A command to spawn: the running Node binary and its arguments. */
export type AgentCommand = { command: string; args: string[] };

/** How to start the agent double; with `script` (a file path) it is passed as `--script FILE`. */
export function agentCommand(options: { script?: string } = {}): AgentCommand {
  return {
    command: process.execPath,
    args: [AGENT_BIN, ...(options.script === undefined ? [] : ["--script", options.script])],
  };
}

/** The environment variables that give the agent its script (path or inline JSON) and its log file. */
export function agentEnv(options: { script?: string; log?: string }): Record<string, string> {
  return {
    ...(options.script === undefined ? {} : { [SCRIPT_ENV]: options.script }),
    ...(options.log === undefined ? {} : { [LOG_ENV]: options.log }),
  };
}
