import type { AgentProfile } from "@icode/agent-profiles";
import { AbortSignalIO } from "./abort-io";
import { runAcpAttempt } from "./acp/run-attempt";
import type { AcpAttempt, NativeAttempt, NativeAttemptContext } from "./attempt";
import { createNativeRunner } from "./native/runner";
import type { ToolOutcome } from "./tool";
import { buildToolset } from "./tools/build-toolset";

/**
 * The runtimes one run's agent nodes run on: the native loop (with the real toolset, and ACP sub-agents
 * through the ACP adapter) and the ACP adapter. Made per run: the native loop keeps the conversations of
 * its node retries until `close`.
 */
export function defaultRunners(): { native: NativeAttempt; acp: AcpAttempt; close(): Promise<void> } {
  const native = createNativeRunner({ buildToolset, runAcpSubAgent: acpSubAgent, mode: "cli" });
  return { native: native.run, acp: runAcpAttempt, close: () => native.close() };
}

/**
 * An ACP sub-agent called by a native agent: one attempt of its own (a new process and session) with the
 * task as input, its activity shown as the parent's; its answer, or its failure, goes back to the parent's
 * model as the tool's result.
 */
export async function acpSubAgent(
  profile: AgentProfile,
  task: string,
  signal: AbortSignal,
  parent: NativeAttemptContext,
): Promise<ToolOutcome> {
  const io = new AbortSignalIO(signal, parent.io);
  const result = await runAcpAttempt({
    ...parent,
    profile,
    modelId: null,
    io,
    request: {
      ...parent.request,
      input: { text: task, data: null },
      attempt: 1,
      continueFrom: null,
      node: { ...parent.request.node, profile: profile.name, instructions_suffix: null },
    },
    // The sub-agent's session is part of the parent's tool call, not an attempt of its own.
    transcript: () => undefined,
  });
  return result.status === "completed"
    ? { ok: true, output: result.value.text }
    : { ok: false, error: `${profile.name} failed (${result.error.class}): ${result.error.message}` };
}
