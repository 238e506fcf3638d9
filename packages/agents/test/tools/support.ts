import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { type AgentConfig, type AgentProfile, loadAgentConfig } from "@icode/agent-profiles";
import { tmpDir, writeTree } from "@icode/test-utils";
import type { SubAgentRunner, ToolContext, ToolsetOptions } from "../../src/tool";

/** A working directory, a configuration directory and a home directory, all new and empty. */
export interface Workspace {
  cwd: string;
  chrysHome: string;
  homeDir: string;
}

export function workspace(): Workspace {
  const root = realpathSync(tmpDir("icode-tools-"));
  const ws = { cwd: join(root, "work"), chrysHome: join(root, "chrys"), homeDir: join(root, "home") };
  for (const dir of Object.values(ws)) mkdirSync(dir, { recursive: true });
  return ws;
}

/**
 * Loads a project profile written as YAML into `.chrys/agents/` of the workspace, the way a run does, and
 * fails the test when the file has a load error.
 */
export async function loadProfile(
  ws: Workspace,
  yaml: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<{ config: AgentConfig; profile: AgentProfile }> {
  const name = /^name:\s*(\S+)/mu.exec(yaml)?.[1];
  if (name === undefined) throw new Error("the test profile needs a `name:` line");
  writeTree(ws.cwd, { [`.chrys/agents/${name}.yaml`]: yaml });
  const config = await loadAgentConfig({ ...ws, env, normalize: false });
  const errors = config.problems.filter((p) => p.severity === "error");
  if (errors.length > 0)
    throw new Error(`the test profile does not load: ${JSON.stringify(errors, null, 2)}`);
  const profile = config.profiles.find((p) => p.name === name);
  if (profile === undefined) throw new Error(`profile ${name} is not among the loaded profiles`);
  return { config, profile };
}

const noSubAgents: SubAgentRunner = async () => ({ ok: false, error: "no sub-agents in this test" });

export function toolsetOptions(
  ws: Workspace,
  loaded: { config: AgentConfig; profile: AgentProfile },
  overrides: Partial<ToolsetOptions> = {},
): ToolsetOptions {
  return {
    profile: loaded.profile,
    config: loaded.config,
    cwd: ws.cwd,
    env: { PATH: process.env["PATH"], HOME: ws.homeDir },
    chrysHome: ws.chrysHome,
    homeDir: ws.homeDir,
    signal: new AbortController().signal,
    vision: false,
    runSubAgent: noSubAgents,
    ...overrides,
  };
}

export function callContext(ws: Workspace, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { cwd: ws.cwd, signal, toolCallId: "call-1" };
}
