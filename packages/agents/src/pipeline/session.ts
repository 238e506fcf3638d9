import type { AgentConfig, AgentProfile } from "@icode/agent-profiles";
import type { ApprovalMode } from "@icode/agent-profiles/policy";
import type { OutputSchema } from "@icode/pipelines";
import type { AgentActivity, AgentAttemptRequest, NodeError, TokenUsage } from "@icode/workflow-scheduler";
import type { ApprovalCallback } from "../attempt";
import type { AgentTranscript } from "../transcript";
import type { NodeWorktree } from "./worktree";

/** A tool call of the engine's handoff tools, as the executor receives it. */
export type HandoffCall =
  | { readonly tool: "submit_handoff"; readonly handoff: unknown }
  | { readonly tool: "report_blocked"; readonly reason: string };

/** What one prompt turn gave: the turn's result text and the handoff tool calls made during it. */
export interface TurnOutcome {
  readonly text: string;
  readonly calls: readonly HandoffCall[];
}

/** Who the session works for now: one attempt of one node. */
export interface SessionBinding {
  readonly runId: string;
  readonly nodeId: string;
  readonly attempt: number;
  /** The node's handoff schema (what `submit_handoff` offers). */
  readonly outputSchema: OutputSchema;
  readonly signal: AbortSignal;
  readonly activity: (activity: AgentActivity) => void;
  readonly approvalMode: ApprovalMode;
  readonly approve?: ApprovalCallback;
}

/** How a session was started (kept for the nodes that continue it). */
export interface SessionSetup {
  readonly config: AgentConfig;
  readonly profile: AgentProfile;
  /** The model profile id (native) or the model id asked of the ACP agent. */
  readonly model: string | null;
  readonly workspace: string;
  readonly worktree: NodeWorktree | null;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly chrysHome: string;
  readonly homeDir: string;
}

/** An agent session a node attempt runs in, kept open for `reuse_session_of` until the run lets it go. */
export interface NodeSession {
  /** What `NodeOutcome.session_ref` says (`acp:<run>/<node>#<attempt>.<n>:<ACP session id>`, `native:…`). */
  readonly ref: string;
  readonly runId: string;
  readonly runtime: "native" | "acp";
  readonly setup: SessionSetup;
  /** True while an attempt uses it. */
  busy: boolean;
  alive(): boolean;
  /** Hands the session to an attempt (the first one at creation, then each that continues it). */
  bind(binding: SessionBinding): void;
  /** One prompt turn; throws what `errorOf` reads (or a defect). */
  turn(text: string): Promise<TurnOutcome>;
  /** The node error a thrown turn stands for, or null for a defect. */
  errorOf(error: unknown): Promise<NodeError | null>;
  /** The bound attempt's transcript and usage (every turn since `bind`). */
  transcript(outcome: string): AgentTranscript;
  usage(): TokenUsage | null;
  close(): Promise<void>;
}

/** A synthetic agent attempt request for the runtimes (a pipeline node is no workflow node). */
export function attemptRequest(
  binding: SessionBinding,
  profile: AgentProfile,
  text: string,
): AgentAttemptRequest {
  return {
    runId: binding.runId,
    activationId: binding.nodeId,
    iteration: 1,
    attempt: binding.attempt,
    input: { text, data: null },
    timeoutMs: null,
    continueFrom: null,
    node: {
      id: binding.nodeId,
      kind: "agent",
      scope: null,
      site: null,
      profile: profile.name,
      model: null,
      instructions_suffix: null,
      timeout: null,
      retry: null,
    },
  };
}
