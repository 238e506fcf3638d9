import type { AgentConfig, AgentProfile, ModelProfile } from "@icode/agent-profiles";
import type { ApprovalMode } from "@icode/agent-profiles/policy";
import type { AgentAttemptRequest, AttemptIO, AttemptResult } from "@icode/workflow-scheduler";
import type { AgentTranscript } from "./transcript";

/**
 * Asks whoever embeds the engine whether a tool call that needs approval may run (approval mode
 * `manual`). `bypass` never asks (the CLI); without a callback, `manual` refuses what needs approval.
 */
export type ApprovalCallback = (request: {
  readonly runId: string;
  readonly activationId: string;
  readonly attempt: number;
  readonly toolCallId: string;
  readonly tool: { readonly kind: string; readonly name: string };
  readonly title: string;
  readonly input: unknown;
  readonly signal: AbortSignal;
}) => Promise<"allow" | "reject">;

/** What every agent attempt gets, whatever the runtime. */
export interface AttemptContext {
  readonly request: AgentAttemptRequest;
  readonly io: AttemptIO;
  readonly profile: AgentProfile;
  readonly config: AgentConfig;
  /** The session's working directory. */
  readonly workspace: string;
  /** The engine process's environment (templates, API keys through `{{NAME}}`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly chrysHome: string;
  readonly homeDir: string;
  readonly approvalMode: ApprovalMode;
  readonly approve?: ApprovalCallback;
  /** Stores the attempt's transcript with the run's records (called once, when the attempt ends). */
  readonly transcript: (transcript: AgentTranscript) => void;
}

/** A native attempt: the loop on a model provider. */
export interface NativeAttemptContext extends AttemptContext {
  readonly model: ModelProfile;
}

/** An ACP attempt: an external agent over stdio; `modelId` is what to ask it for (`null`: its default). */
export interface AcpAttemptContext extends AttemptContext {
  readonly modelId: string | null;
  /** A reasoning effort to ask for (a `thought_level` session option), or null/absent: the agent's own. */
  readonly effort?: string | null;
}

export type NativeAttempt = (context: NativeAttemptContext) => Promise<AttemptResult>;
export type AcpAttempt = (context: AcpAttemptContext) => Promise<AttemptResult>;
