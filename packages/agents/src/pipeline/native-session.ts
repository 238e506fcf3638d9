import type { ModelProfile } from "@icode/agent-profiles";
import { loadMemory, maxTransientRetries } from "@icode/agent-profiles/policy";
import type { OutputSchema } from "@icode/pipelines";
import type { NodeError, TokenUsage } from "@icode/workflow-scheduler";
import type { NativeAttemptContext } from "../attempt";
import { type AgentErrorClass, RETRYABLE_AGENT_CLASSES } from "../codes";
import { describe, failure, type ModelFailure } from "../native/classify";
import { type Conversation, newConversation } from "../native/conversation";
import { DispatcherPool } from "../native/http";
import { buildInstructions } from "../native/instructions";
import { type AgentRun, abortMessage, type LoopDeps, runAgentLoop } from "../native/loop";
import { ModelCache, unsupportedSetting } from "../native/provider";
import { type AcpSubAgentRunner, subAgentRunner, type ToolsetBuilder } from "../native/runner";
import { UsageMeter } from "../native/usage";
import { acpSubAgent } from "../runners";
import type { AgentTool, Toolset } from "../tool";
import { buildToolset } from "../tools/build-toolset";
import type { AgentTranscript } from "../transcript";
import { NodeFailure } from "./codes";
import { NodeAttemptIO } from "./io";
import {
  attemptRequest,
  type HandoffCall,
  type NodeSession,
  type SessionBinding,
  type SessionSetup,
  type TurnOutcome,
} from "./session";

export interface NativeSessionOptions {
  /** Builds the profile's tools (default: the real toolset). */
  readonly buildToolset?: ToolsetBuilder;
  /** How retries wait (default: a timer the attempt's signal cuts short). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** ACP sub-agents of native profiles (default: the ACP adapter). */
  readonly runAcpSubAgent?: AcpSubAgentRunner;
}

/** The HTTP connections and SDK models the native sessions of one executor share. */
export class NativeShared {
  readonly pool = new DispatcherPool();
  readonly models = new ModelCache();
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A turn of the native loop that failed, with the loop's failure. */
class NativeTurnFailure extends Error {
  constructor(readonly failure: ModelFailure) {
    super(failure.message);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The engine's handoff tools for the native loop: they only record the call; the executor checks it. */
function handoffTools(schema: OutputSchema, calls: HandoffCall[]): AgentTool[] {
  return [
    {
      name: "submit_handoff",
      kind: "todo",
      activityKind: "other",
      description:
        "Submit this node's structured handoff (a JSON object matching the node's output schema) as your final step. The engine checks it when you finish and tells you exactly what is wrong if it does not match.",
      inputSchema: { ...schema, type: "object" },
      title: () => "submit_handoff",
      execute: async (input) => {
        calls.push({ tool: "submit_handoff", handoff: input });
        return {
          ok: true,
          output:
            "Handoff received. The engine checks it against the node's output schema when you finish; finish now.",
        };
      },
    },
    {
      name: "report_blocked",
      kind: "todo",
      activityKind: "other",
      description:
        "Report that you cannot finish this node (missing access, contradictory task, …), with the reason. The node ends blocked.",
      inputSchema: {
        type: "object",
        properties: { reason: { type: "string" } },
        required: ["reason"],
      },
      title: () => "report_blocked",
      execute: async (input) => {
        const reason = (input as { reason?: unknown } | null)?.reason;
        if (typeof reason !== "string" || reason.trim() === "") {
          return { ok: false, error: "report_blocked needs a non-empty string `reason`." };
        }
        calls.push({ tool: "report_blocked", reason });
        return { ok: true, output: "Reported blocked. Finish now." };
      },
    },
  ];
}

/**
 * A pipeline node's native session: the agent loop on its model profile with one conversation, which
 * correction rounds and continuing nodes (`reuse_session_of`) extend with a new user message. The toolset
 * (the profile's tools plus `submit_handoff` and `report_blocked`) is built per attempt.
 */
export class NativeNodeSession implements NodeSession {
  readonly runtime = "native";
  busy = false;
  private conversation: Conversation | null = null;
  private binding: SessionBinding;
  private usageMeter = new UsageMeter();
  private toolset: Toolset | null = null;
  private calls: HandoffCall[] = [];
  private ended = false;

  private constructor(
    readonly ref: string,
    readonly setup: SessionSetup,
    private readonly model: ModelProfile,
    private readonly options: NativeSessionOptions,
    private readonly shared: NativeShared,
    binding: SessionBinding,
  ) {
    this.binding = binding;
  }

  get runId(): string {
    return this.binding.runId;
  }

  static async open(options: {
    ref: string;
    setup: SessionSetup;
    binding: SessionBinding;
    model: ModelProfile;
    native: NativeSessionOptions;
    shared: NativeShared;
  }): Promise<NativeNodeSession> {
    const session = new NativeNodeSession(
      options.ref,
      options.setup,
      options.model,
      options.native,
      options.shared,
      options.binding,
    );
    const refused =
      options.binding.approvalMode === "auto"
        ? failure("approval_mode_unsupported", "approval mode auto is not available in this engine")
        : unsupportedSetting(options.model);
    if (refused !== null) throw new NodeFailure(refused.class, refused.message);
    return session;
  }

  alive(): boolean {
    return !this.ended;
  }

  bind(binding: SessionBinding): void {
    void this.releaseTools();
    this.binding = binding;
    this.usageMeter = new UsageMeter();
  }

  private async releaseTools(): Promise<void> {
    const t = this.toolset;
    this.toolset = null;
    await t?.close().catch(() => undefined);
  }

  private async tools(conv: Conversation): Promise<{ toolset: Toolset; system: string }> {
    const { setup, binding } = this;
    const memory = await loadMemory(setup.profile, { cwd: setup.workspace });
    for (const p of memory.problems) binding.activity({ kind: "warning", code: p.code, message: p.message });
    if (this.toolset === null) {
      const build = this.options.buildToolset ?? buildToolset;
      let built: Toolset;
      try {
        built = await build({
          profile: setup.profile,
          config: setup.config,
          cwd: setup.workspace,
          env: setup.env,
          chrysHome: setup.chrysHome,
          homeDir: setup.homeDir,
          signal: binding.signal,
          vision: this.model.vision,
          runSubAgent: this.subAgents(conv),
        });
      } catch (error) {
        throw new NativeTurnFailure(
          failure(
            "agent_tools_failed",
            `the tools of agent profile "${setup.profile.name}" could not be set up: ${describe(error)}`,
          ),
        );
      }
      for (const w of built.warnings) binding.activity({ kind: "warning", code: w.code, message: w.message });
      const extra = handoffTools(binding.outputSchema, this.calls);
      this.toolset = {
        get tools() {
          return [
            ...built.tools.filter((t) => t.name !== "submit_handoff" && t.name !== "report_blocked"),
            ...extra,
          ];
        },
        instructions: built.instructions,
        warnings: built.warnings,
        close: () => built.close(),
      };
    }
    const system = buildInstructions({
      profile: setup.profile.instructions,
      memory: memory.files,
      toolset: this.toolset.instructions,
      suffix: null,
    });
    return { toolset: this.toolset, system };
  }

  private deps(): LoopDeps {
    return {
      pool: this.shared.pool,
      models: this.shared.models,
      sleep: this.options.sleep ?? abortableSleep,
      maxRetries: maxTransientRetries(this.setup.config.settings, "cli"),
    };
  }

  /**
   * The profile's sub-agents, as in workflow agent nodes: native ones run a nested loop (their tool calls and
   * tokens count in this attempt), ACP ones an attempt of their own through the ACP adapter.
   */
  private subAgents(conv: Conversation) {
    const { setup, binding } = this;
    const context: NativeAttemptContext = {
      request: attemptRequest(binding, setup.profile, conv.task),
      io: new NodeAttemptIO(binding.signal, binding.activity),
      profile: setup.profile,
      config: setup.config,
      workspace: setup.workspace,
      env: setup.env,
      chrysHome: setup.chrysHome,
      homeDir: setup.homeDir,
      approvalMode: binding.approvalMode,
      ...(binding.approve === undefined ? {} : { approve: binding.approve }),
      transcript: () => undefined,
      model: this.model,
    };
    const runAcpSubAgent: AcpSubAgentRunner = this.options.runAcpSubAgent ?? acpSubAgent;
    return subAgentRunner(
      context,
      { buildToolset: this.options.buildToolset ?? buildToolset, runAcpSubAgent },
      this.deps(),
      this.usageMeter,
      conv.toolCalls,
      1,
      setup.profile,
    );
  }

  async turn(text: string): Promise<TurnOutcome> {
    const { binding, setup } = this;
    if (binding.signal.aborted)
      throw new NativeTurnFailure(failure("agent_aborted", abortMessage(binding.signal)));
    const attempt = binding.attempt;
    let conv = this.conversation;
    if (conv === null) {
      conv = newConversation(text);
      this.conversation = conv;
    } else conv.messages.push({ role: "user", content: text });
    conv.transcript.push({ role: "user", content: text, attempt });
    this.calls.length = 0;
    const { toolset, system } = await this.tools(conv);
    if (system !== conv.system) {
      conv.system = system;
      conv.transcript.push({ role: "system", content: system, attempt });
    }
    const deps = this.deps();
    const handoffOverrides = { "todo.submit_handoff": "auto", "todo.report_blocked": "auto" } as const;
    const run: AgentRun = {
      profile: setup.profile,
      approval: {
        ...setup.profile.approval,
        overrides: { ...setup.profile.approval.overrides, ...handoffOverrides },
      },
      approvalMode: binding.approvalMode,
      approve: binding.approve,
      identity: { runId: binding.runId, activationId: binding.nodeId, attempt },
      model: this.model,
      env: setup.env,
      workspace: setup.workspace,
      system,
      toolset,
      conversation: conv,
      signal: binding.signal,
      activity: (a) => binding.activity(a),
      usage: this.usageMeter,
      idPrefix: "",
      titlePrefix: "",
      record: (r) => conv.toolCalls.push(r),
      note: (m) => conv.transcript.push({ ...jsonNote(m), attempt }),
    };
    let result: Awaited<ReturnType<typeof runAgentLoop>>;
    try {
      result = await runAgentLoop(run, deps);
    } catch (error) {
      if (binding.signal.aborted)
        throw new NativeTurnFailure(failure("agent_aborted", abortMessage(binding.signal)));
      throw new NativeTurnFailure(
        failure("agent_internal_error", `the agent loop failed unexpectedly: ${describe(error)}`),
      );
    }
    if (!result.ok) throw new NativeTurnFailure(result.failure);
    return { text: result.text, calls: [...this.calls] };
  }

  async errorOf(error: unknown): Promise<NodeError | null> {
    if (!(error instanceof NativeTurnFailure)) return null;
    const cls: AgentErrorClass = error.failure.class;
    return {
      class: cls,
      message: error.failure.message,
      retryable: RETRYABLE_AGENT_CLASSES.has(cls),
      traceback: null,
    };
  }

  transcript(outcome: string): AgentTranscript {
    const conv = this.conversation;
    const attempt = this.binding.attempt;
    void this.releaseTools();
    return {
      node_id: this.binding.nodeId,
      activation_id: this.binding.nodeId,
      attempt,
      runtime: "native",
      profile: this.setup.profile.name,
      model: this.model.id,
      continued_from: null,
      messages: conv?.transcript ?? [],
      tool_calls: conv?.toolCalls ?? [],
      usage: this.usage(),
      stderr: null,
      outcome,
    };
  }

  usage(): TokenUsage | null {
    return this.usageMeter.reported ? this.usageMeter.total : null;
  }

  async close(): Promise<void> {
    this.ended = true;
    this.conversation = null;
    await this.releaseTools();
  }
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

function jsonNote(m: Parameters<AgentRun["note"]>[0]) {
  const { tool_calls, ...rest } = m;
  return tool_calls === undefined
    ? rest
    : {
        ...rest,
        tool_calls: tool_calls.map((c) => ({
          ...c,
          input: JSON.parse(JSON.stringify(c.input ?? null)) as Json,
        })),
      };
}
