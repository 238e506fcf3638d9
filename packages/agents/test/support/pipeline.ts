import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  type AcpDoubleScriptInput,
  agentCommand,
  readAgentLog,
  writeAgentScript,
} from "@icode/acp-agent-double";
import { type AgentConfig, type AgentProfile, loadAgentConfig } from "@icode/agent-profiles";
import {
  DEFAULT_OUTPUT_SCHEMA,
  type NodeRunEvent,
  type NodeRunRequest,
  type PipelineNodeInput,
  PipelineNodeSchema,
} from "@icode/pipelines";
import { tmpDir } from "@icode/test-utils";
import { acpProfile, requireDoubleBuilt } from "./acp";

/** A loaded (empty) configuration with these profiles, the first one the default agent. */
export async function configWith(profiles: AgentProfile[], home: string, cwd: string): Promise<AgentConfig> {
  const config = await loadAgentConfig({ chrysHome: home, cwd, env: {}, homeDir: home, acpPresets: false });
  return { ...config, profiles: [...profiles, ...config.profiles], defaultProfile: profiles[0] ?? null };
}

/** The ACP double as the profile `Double`, a run folder, a launch directory, and its log. */
export function acpDouble(script: AcpDoubleScriptInput, acp: Record<string, unknown> = {}) {
  requireDoubleBuilt();
  const dir = tmpDir("pipeline-node-");
  const launch = join(dir, "work");
  const runDir = join(dir, "run");
  const home = join(dir, "home");
  for (const d of [launch, runDir, home]) mkdirSync(d, { recursive: true });
  const log = join(dir, "agent.jsonl");
  const file = writeAgentScript(join(dir, "script.json"), script);
  const { command, args } = agentCommand({ script: file });
  const profile = acpProfile({ command, args, ...acp, env: { ACP_DOUBLE_LOG: log } });
  return { dir, launch, runDir, home, log, profile, entries: () => readAgentLog(log) };
}

/** A node attempt request with the events it reports. */
export function nodeRequest(
  where: { runDir: string; launch: string; home: string },
  node: Partial<PipelineNodeInput> & { id: string },
  extra: Partial<Omit<NodeRunRequest, "node">> = {},
) {
  const events: NodeRunEvent[] = [];
  const parsed = PipelineNodeSchema.parse({ name: node.id, prompt_template: "Do the task.", ...node });
  const request: NodeRunRequest = {
    runId: "run-1",
    node: parsed,
    attempt: 1,
    prompt: `Task of ${node.id}.`,
    outputSchema: DEFAULT_OUTPUT_SCHEMA,
    reuseSession: null,
    keepSession: true,
    runDir: where.runDir,
    launchCwd: where.launch,
    launchPermissionMode: "yolo",
    env: { PATH: process.env["PATH"], HOME: where.home },
    onEvent: (e) => events.push(e),
    ...extra,
  };
  return { request, events };
}
