import type { AgentConfig, AgentProfile, ModelSelection } from "@icode/agent-profiles";
import type { ApprovalMode } from "@icode/agent-profiles/policy";
import type { AgentAttemptRequest, AttemptIO, AttemptResult } from "@icode/workflow-scheduler";
import type { AcpAttempt, ApprovalCallback, AttemptContext, NativeAttempt } from "./attempt";
import type { AgentTranscript } from "./transcript";

/** An agent node bound to the profile and model it runs with (the engine's `bindings` stage). */
export interface BoundAgentNode {
  readonly profile: AgentProfile;
  readonly selection: Extract<ModelSelection, { ok: true }>;
}

export interface AgentExecutorOptions {
  readonly config: AgentConfig;
  /** Every agent node of the run, by node ID. */
  readonly agents: ReadonlyMap<string, BoundAgentNode>;
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly chrysHome: string;
  readonly homeDir: string;
  /** `bypass` (the CLI: calls that need approval run), or `manual` (asks `approve`). */
  readonly approvalMode: ApprovalMode;
  readonly approve?: ApprovalCallback;
  /** Stores an attempt's transcript with the run's records. */
  readonly transcript: (record: {
    node_id: string;
    activation_id: string;
    attempt: number;
    transcript: AgentTranscript;
  }) => void;
  /** The runtimes: the native loop and the ACP adapter (`defaultRunners()`), closed with the executor. */
  readonly runners: { readonly native: NativeAttempt; readonly acp: AcpAttempt; close?(): Promise<void> };
}

/**
 * The scheduler's `runAgent` executor: each attempt of an agent node runs on its profile's runtime — the
 * native loop with the selected model profile, or the external ACP agent asked for the selected model id.
 */
export function createAgentExecutor(options: AgentExecutorOptions): {
  runAgent(request: AgentAttemptRequest, io: AttemptIO): Promise<AttemptResult>;
  /** Lets go of what the runtimes keep for the run (conversations for node retries, connections). */
  close(): Promise<void>;
} {
  return {
    close: async () => {
      await options.runners.close?.();
    },
    async runAgent(request, io) {
      const bound = options.agents.get(request.node.id);
      if (bound === undefined) {
        return {
          status: "failed",
          error: {
            class: "internal_error",
            message: `agent node "${request.node.id}" was not bound to a profile before the run started`,
            retryable: false,
            traceback: null,
          },
        };
      }
      const context: AttemptContext = {
        request,
        io,
        profile: bound.profile,
        config: options.config,
        workspace: options.workspace,
        env: options.env,
        chrysHome: options.chrysHome,
        homeDir: options.homeDir,
        approvalMode: options.approvalMode,
        ...(options.approve === undefined ? {} : { approve: options.approve }),
        transcript: (transcript) =>
          options.transcript({
            node_id: request.node.id,
            activation_id: request.activationId,
            attempt: request.attempt,
            transcript,
          }),
      };
      const selection = bound.selection;
      return selection.kind === "native"
        ? options.runners.native({ ...context, model: selection.model })
        : options.runners.acp({ ...context, modelId: selection.modelId });
    },
  };
}
