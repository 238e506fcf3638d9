/**
 * @module @icode/acp-agent-double
 * A scripted ACP agent process for tests, built on the ACP SDK's agent side: the script (zod schema
 * `AcpDoubleScriptSchema`) decides the handshake, authentication, sessions, modes, config options and
 * model switching, and the steps of every prompt turn; `ACP_DOUBLE_LOG` gets one JSON line per event.
 *
 * @example
 * import { agentCommand, agentEnv, readAgentLog, writeAgentScript } from "@icode/acp-agent-double";
 * const script = writeAgentScript(join(dir, "agent.json"), { turns: [{ steps: [{ message: "ok" }] }] });
 * const { command, args } = agentCommand({ script }); // → { command: process.execPath, args: [".../dist/agent.js", "--script", script] }
 * const env = agentEnv({ log: join(dir, "agent.jsonl") }); // → { ACP_DOUBLE_LOG: ".../agent.jsonl" }
 * // … spawn it, speak ACP …
 * finishedTurns(readAgentLog(join(dir, "agent.jsonl"))).length; // → turns finished, by every agent process
 */
export { ACP_DOUBLE_CODES, type AcpDoubleCode, AcpDoubleCodeSchema } from "./codes";
export { AGENT_BIN, type AgentCommand, agentCommand, agentEnv } from "./command";
export {
  HANDOFF_BEHAVIOURS,
  type HandoffBehaviour,
  type HandoffScriptOptions,
  handoffScript,
} from "./handoff-scripts";
export {
  type AgentLogEntry,
  AgentLogEntrySchema,
  type AgentLogEvent,
  finishedTurns,
  readAgentLog,
  receivedPrompts,
} from "./log-entry";
export { promptText } from "./prompt-text";
export {
  type AcpDoubleScript,
  type AcpDoubleScriptInput,
  AcpDoubleScriptSchema,
  STEP_KINDS,
  type Step,
  type StepInput,
  type StepKind,
  StepSchema,
  selectTurn,
  stepKind,
  type Turn,
  TurnSchema,
} from "./script";
export {
  inlineAgentScript,
  LOG_ENV,
  loadAgentScript,
  parseAgentScript,
  SCRIPT_ENV,
  type ScriptSource,
  writeAgentScript,
} from "./script-file";
