// The agent rows' projects: workflows of agent nodes, the agent profiles they name and the model profiles
// that point them at the loopback provider double. Written by the agent children (the provider's port is
// known only once it listens), always under a temporary folder, never into the repository.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The native agent profile every agent row uses: instructions only, no tools (so no tool schemas sent). */
const NATIVE_PROFILE = "Bench";
export const NATIVE_INSTRUCTIONS = "You are a benchmark agent. Answer in one line.";
/** The ACP agent profile (the scripted ACP agent double). */
const ACP_PROFILE = "BenchAcp";
/** What every model request asks for (`model_id` of every model profile). */
export const MODEL_ID = "bench-model";
/** `max_output_tokens` of the model profiles, sent with every request (and by the bare loops). */
export const MAX_OUTPUT_TOKENS = 1024;

/**
 * A chain of `n` native agent nodes: the run's input goes to the first, each reply to the next. With
 * `model`, every node names that model profile (`agent(model=)`) instead of the default model.
 */
export function agentChainSource(n, { model = null } = {}) {
  const bound = model === null ? "" : `, model=${JSON.stringify(model)}`;
  return `"""Benchmark workload: a chain of ${n} native agent nodes."""

from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("agent chain of ${n}")
nodes = [wf.agent("a%d" % i, profile=${JSON.stringify(NATIVE_PROFILE)}${bound}) for i in range(${n})]
${n > 1 ? "wf.chain(*nodes)\n" : ""}wf.start(nodes[0])
wf.output(nodes[-1])
workflow = wf.build()
`;
}

/**
 * `n` agent nodes in parallel: a Python node hands the run's input to each, a Python node joins their
 * replies (the default merge). How many run at once is the engine's agent limit.
 */
export function agentFanoutSource(n, { model = null } = {}) {
  const bound = model === null ? "" : `, model=${JSON.stringify(model)}`;
  return `"""Benchmark workload: ${n} agent nodes in parallel between two Python nodes."""

from chrys.workflows import WorkflowBuilder, WorkflowValue


def echo(value: WorkflowValue) -> WorkflowValue:
    return value


wf = WorkflowBuilder("agent fan-out of ${n}")
src = wf.python("src", echo)
agents = [wf.agent("a%d" % i, profile=${JSON.stringify(NATIVE_PROFILE)}${bound}) for i in range(${n})]
for agent in agents:
    wf.edge(src, agent)
sink = wf.python("sink", echo)
wf.join(agents, sink)
wf.start(src)
wf.output(sink)
workflow = wf.build()
`;
}

/** A chain of `n` ACP agent nodes: each spawns the agent, opens a session, sends one prompt, stops it. */
export function acpChainSource(n) {
  return `"""Benchmark workload: a chain of ${n} ACP agent nodes, one agent process each."""

from chrys.workflows import WorkflowBuilder

wf = WorkflowBuilder("ACP chain of ${n}")
nodes = [wf.agent("a%d" % i, profile=${JSON.stringify(ACP_PROFILE)}) for i in range(${n})]
${n > 1 ? "wf.chain(*nodes)\n" : ""}wf.start(nodes[0])
wf.output(nodes[-1])
workflow = wf.build()
`;
}

/** The native agent profile's YAML. */
export function nativeProfileYaml() {
  return [
    `name: ${NATIVE_PROFILE}`,
    `instructions: ${JSON.stringify(NATIVE_INSTRUCTIONS)}`,
    "approval:",
    "  default: auto",
    "",
  ].join("\n");
}

/** The ACP agent profile's YAML: `command` and `args` start the agent (with the engine's base environment). */
export function acpProfileYaml({ command, args }) {
  return [
    `name: ${ACP_PROFILE}`,
    "acp:",
    `  command: ${JSON.stringify(command)}`,
    `  args: ${JSON.stringify(args)}`,
    "  result_mode: last_segment",
    "",
  ].join("\n");
}

/**
 * A model profile's YAML: `provider` `openai` (Chat Completions) or `anthropic`, at `baseUrl`, streaming
 * or not. The key comes from `BENCH_MODEL_KEY` at each request, as a real key would.
 */
export function modelProfileYaml({ id, name, provider, baseUrl, stream }) {
  return [
    `id: ${id}`,
    `name: ${name}`,
    `provider: ${provider}`,
    `model_id: ${MODEL_ID}`,
    `base_url: ${baseUrl}`,
    'api_key: "{{BENCH_MODEL_KEY}}"',
    `max_output_tokens: ${MAX_OUTPUT_TOKENS}`,
    `stream: ${stream}`,
    "",
  ].join("\n");
}

/**
 * Writes a project for agent workloads: `<project>/.chrys/workflows/<id>.py` for each `[id, source]`,
 * `<project>/.chrys/agents/<file>.yaml` for each `[file, yaml]` of `agents`, and each model profile of
 * `models` (`[{ id, yaml }]`) under `chrysHome`. No default model is set: every native node names its own.
 */
export function writeAgentProject({ project, chrysHome, workflows, agents, models = [] }) {
  const dirs = {
    workflows: join(project, ".chrys", "workflows"),
    agents: join(project, ".chrys", "agents"),
    models: join(chrysHome, "models"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  for (const [id, source] of workflows) writeFileSync(join(dirs.workflows, `${id}.py`), source);
  for (const [file, yaml] of agents) writeFileSync(join(dirs.agents, `${file}.yaml`), yaml);
  for (const { id, yaml } of models) writeFileSync(join(dirs.models, `${id}.yaml`), yaml);
  return project;
}
