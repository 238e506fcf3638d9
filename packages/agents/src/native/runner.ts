import type { AgentProfile, ModelProfile } from "@icode/agent-profiles";
import { loadMemory, maxTransientRetries } from "@icode/agent-profiles/policy";
import type { AgentActivity, AttemptResult } from "@icode/workflow-scheduler";
import type { NativeAttempt, NativeAttemptContext } from "../attempt";
import { type AgentErrorClass, RETRYABLE_AGENT_CLASSES } from "../codes";
import type { SubAgentRunner, ToolOutcome, Toolset, ToolsetOptions } from "../tool";
import type { AgentTranscript } from "../transcript";
import { describe, failure, type ModelFailure } from "./classify";
import { ConversationStore, newConversation, type ToolCallRecord } from "./conversation";
import { DispatcherPool } from "./http";
import { buildInstructions } from "./instructions";
import { type AgentRun, abortMessage, type LoopDeps, type LoopResult, runAgentLoop } from "./loop";
import { ModelCache, unsupportedSetting } from "./provider";
import { UsageMeter } from "./usage";

/** Builds the tools of one agent (the tools stream's `buildToolset`). */
export type ToolsetBuilder = (options: ToolsetOptions) => Promise<Toolset>;

/** Runs an ACP profile called as a sub-agent (the ACP adapter provides it). */
export type AcpSubAgentRunner = (
  profile: AgentProfile,
  task: string,
  signal: AbortSignal,
  parent: NativeAttemptContext,
) => Promise<ToolOutcome>;

export interface NativeRunnerOptions {
  readonly buildToolset: ToolsetBuilder;
  /** ACP sub-agents; without it, calling one returns an error to the model. */
  readonly runAcpSubAgent?: AcpSubAgentRunner;
  /** Which default of `llm.retry.max_transient` applies: 18 for CLI runs, 10 for interactive and server modes. */
  readonly mode?: "cli" | "interactive";
  /** How retries wait (default: a timer that the attempt's signal cuts short). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Activations whose conversations are kept for node retries (least recently used dropped first). */
  readonly maxConversations?: number;
}

export interface NativeRunner {
  /** One native attempt: the scheduler's `runAgent` for a native profile, once the model is chosen. */
  readonly run: NativeAttempt;
  /** Drops the conversations kept for a run's node retries (call when the run ends). */
  forgetRun(runId: string): void;
  /** Closes the kept HTTP connections. */
  close(): Promise<void>;
}

/** Sub-agents may call sub-agents, to this depth (ours: it stops A → B → A → … cycles). */
export const MAX_SUB_AGENT_DEPTH = 4;

/**
 * The native agent loop on the Vercel AI SDK. Each attempt loads the profile's memory, builds its toolset,
 * runs the step loop against the attempt's model profile and ends with one transcript; a node retry with
 * `continueFrom` continues the conversation that attempt left (tool calls that finished are not run again).
 *
 * @example
 * const runner = createNativeRunner({ buildToolset });
 * const result = await runner.run({ request, io, profile, config, model, workspace, env, chrysHome, homeDir,
 *   approvalMode: "bypass", transcript: (t) => records.push(t) });
 * // → { status: "completed", value: { text: "…", data: null } }
 */
export function createNativeRunner(options: NativeRunnerOptions): NativeRunner {
  // The SDK would print its warnings to the console; the loop reports them as `warning` activities instead.
  const g = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
  if (g.AI_SDK_LOG_WARNINGS === undefined) g.AI_SDK_LOG_WARNINGS = false;
  const store = new ConversationStore(options.maxConversations);
  const pool = new DispatcherPool();
  const models = new ModelCache();
  const sleep = options.sleep ?? abortableSleep;

  // The attempt of each activation still running: the scheduler starts a retry as soon as it has aborted
  // the attempt before (a timeout), and the retry continues only once that attempt has put its conversation down.
  const running = new Map<string, Promise<void>>();

  const run: NativeAttempt = async (context) => {
    const k = `${context.request.runId}\u0000${context.request.activationId}`;
    const before = running.get(k);
    let settled: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      settled = resolve;
    });
    running.set(k, mine);
    try {
      if (before !== undefined) {
        // …but never longer than this attempt itself may run (a tool that ignores its signal).
        await Promise.race([before, new Promise<void>((resolve) => context.io.onAbort(() => resolve()))]);
      }
      return await attemptOnce(context);
    } finally {
      settled();
      if (running.get(k) === mine) running.delete(k);
    }
  };

  const attemptOnce: NativeAttempt = async (context) => {
    const { request, io } = context;
    const deps: LoopDeps = {
      pool,
      models,
      sleep,
      maxRetries: maxTransientRetries(context.config.settings, options.mode ?? "cli"),
    };
    const usage = new UsageMeter();
    const started = store.take(request.runId, request.activationId, request.continueFrom ?? 0);
    const continued = request.continueFrom !== null && started !== null;
    if (request.continueFrom !== null && started === null) {
      io.activity({
        kind: "warning",
        code: "conversation_unavailable",
        message: `attempt ${request.continueFrom}'s conversation is not kept here (the engine restarted, or it was dropped); this attempt starts again from the input`,
      });
    }
    const conv = started ?? newConversation(request.input.text);
    const attempt = request.attempt;
    const finish = (result: LoopResult): AttemptResult => {
      const outcome = result.ok ? "completed" : result.failure.class;
      if (result.ok) store.drop(request.runId, request.activationId);
      else store.keep(request.runId, request.activationId, attempt, conv);
      const transcript: AgentTranscript = {
        node_id: request.node.id,
        activation_id: request.activationId,
        attempt,
        runtime: "native",
        profile: context.profile.name,
        model: context.model.id,
        continued_from: continued ? request.continueFrom : null,
        messages: conv.transcript,
        tool_calls: conv.toolCalls,
        usage: usage.reported ? usage.total : null,
        stderr: null,
        outcome,
      };
      context.transcript(transcript);
      return result.ok
        ? { status: "completed", value: { text: result.text, data: null } }
        : { status: "failed", error: nodeError(result.failure) };
    };

    const refused = refuse(context);
    if (refused !== null) return finish({ ok: false, failure: refused });
    if (!continued) conv.transcript.push({ role: "user", content: conv.task, attempt });

    let toolset: Toolset | null = null;
    try {
      const memory = await loadMemory(context.profile, { cwd: context.workspace });
      for (const p of memory.problems) io.activity({ kind: "warning", code: p.code, message: p.message });
      const signal = io.signal;
      const subAgents = subAgentRunner(context, options, deps, usage, conv.toolCalls, 1, context.profile);
      try {
        toolset = await options.buildToolset(
          toolsetOptions(context, context.profile, context.model, signal, subAgents),
        );
      } catch (error) {
        return finish({
          ok: false,
          failure: failure(
            "agent_tools_failed",
            `the tools of agent profile "${context.profile.name}" could not be set up: ${describe(error)}`,
          ),
        });
      }
      for (const w of toolset.warnings) io.activity({ kind: "warning", code: w.code, message: w.message });
      const system = buildInstructions({
        profile: context.profile.instructions,
        memory: memory.files,
        toolset: toolset.instructions,
        suffix: request.node.instructions_suffix,
      });
      if (system !== conv.system) {
        conv.system = system;
        conv.transcript.push({ role: "system", content: system, attempt });
      }
      const agent: AgentRun = {
        profile: context.profile,
        approval: context.profile.approval,
        approvalMode: context.approvalMode,
        approve: context.approve,
        identity: { runId: request.runId, activationId: request.activationId, attempt },
        model: context.model,
        env: context.env,
        workspace: context.workspace,
        system,
        toolset,
        conversation: conv,
        signal,
        activity: (a) => io.activity(a),
        usage,
        idPrefix: "",
        titlePrefix: "",
        record: (r) => conv.toolCalls.push(r),
        note: (m) => conv.transcript.push({ ...jsonNote(m), attempt }),
      };
      return finish(await runAgentLoop(agent, deps));
    } catch (error) {
      if (io.signal.aborted)
        return finish({ ok: false, failure: failure("agent_aborted", abortMessage(io.signal)) });
      return finish({
        ok: false,
        failure: failure("agent_internal_error", `the agent loop failed unexpectedly: ${describe(error)}`),
      });
    } finally {
      await toolset?.close().catch(() => undefined);
    }
  };

  return {
    run,
    forgetRun: (runId) => store.forgetRun(runId),
    close: () => pool.close(),
  };
}

/** What the attempt cannot do, refused before anything starts (never accepted and ignored). */
function refuse(context: NativeAttemptContext): ModelFailure | null {
  if (context.approvalMode === "auto") {
    return failure(
      "approval_mode_unsupported",
      "approval mode auto asks an approval judge model, which this engine does not have; use manual (with an approval callback) or bypass",
    );
  }
  return unsupportedSetting(context.model);
}

function toolsetOptions(
  context: NativeAttemptContext,
  profile: AgentProfile,
  model: ModelProfile,
  signal: AbortSignal,
  runSubAgent: SubAgentRunner,
): ToolsetOptions {
  return {
    profile,
    config: context.config,
    cwd: context.workspace,
    env: context.env,
    chrysHome: context.chrysHome,
    homeDir: context.homeDir,
    signal,
    vision: model.vision,
    runSubAgent,
  };
}

/**
 * The `SubAgentRunner` a parent's toolset calls: a nested loop on the sub-agent's profile, with its bound
 * model (the parent's when it binds none, or none that is usable), its parent's approval rules, no memory
 * and a conversation of its own. A failed sub-agent returns its error to the parent's model at once. Its
 * tool calls are reported and recorded in the parent's attempt, their ids prefixed
 * `<sub-agent>#<n>/`; its tokens count in the parent attempt's usage.
 */
export function subAgentRunner(
  context: NativeAttemptContext,
  options: NativeRunnerOptions,
  deps: LoopDeps,
  usage: UsageMeter,
  records: ToolCallRecord[],
  depth: number,
  parent: AgentProfile,
): SubAgentRunner {
  let calls = 0;
  const running = new Map<string, number>();
  let total = 0;
  return async (profile, task, signal) => {
    if (profile.kind === "acp") {
      if (options.runAcpSubAgent !== undefined) return options.runAcpSubAgent(profile, task, signal, context);
      return {
        ok: false,
        error: `sub-agent "${profile.name}" is an external ACP agent, and ACP sub-agents are not available in this engine yet`,
      };
    }
    if (depth > MAX_SUB_AGENT_DEPTH) {
      return {
        ok: false,
        error: `sub-agent "${profile.name}" would run ${depth} levels deep; sub-agents may nest at most ${MAX_SUB_AGENT_DEPTH} levels`,
      };
    }
    const entry = parent.sub_agents.agents.find((e) => e.profile === profile.name);
    const perAgent = entry?.max_concurrency ?? 3;
    const allTotal = parent.sub_agents.max_total_concurrency;
    if (perAgent <= 0 || allTotal <= 0) {
      return {
        ok: false,
        error: `sub-agent "${profile.name}" cannot be called: agent profile "${parent.name}" sets its concurrency to ${Math.min(perAgent, allTotal)}`,
      };
    }
    if ((running.get(profile.name) ?? 0) >= perAgent || total >= allTotal) {
      return {
        ok: false,
        error: `sub-agent "${profile.name}" is busy: at most ${perAgent} call(s) of it and ${allTotal} sub-agent call(s) in all may run at once; wait for one to finish`,
      };
    }
    const bound = context.config.models.find((m) => m.id === profile.model.profile_id && m.usable);
    const model = bound ?? context.model;
    const unsupported = unsupportedSetting(model);
    if (unsupported !== null) return { ok: false, error: unsupported.message };

    calls += 1;
    total += 1;
    running.set(profile.name, (running.get(profile.name) ?? 0) + 1);
    const prefix = `${profile.name}#${calls}/`;
    let toolset: Toolset | null = null;
    try {
      const nested = subAgentRunner(context, options, deps, usage, records, depth + 1, profile);
      toolset = await options.buildToolset(toolsetOptions(context, profile, model, signal, nested));
      const conv = newConversation(task);
      const forward = (a: AgentActivity) => {
        if (
          a.kind === "tool_call" ||
          a.kind === "permission" ||
          a.kind === "request_retry" ||
          a.kind === "compaction"
        )
          context.io.activity(a);
        else if (a.kind === "usage") context.io.activity({ kind: "usage", usage: usage.total });
        else if (a.kind === "warning")
          context.io.activity({ ...a, message: `sub-agent ${profile.name}: ${a.message}` });
      };
      const result = await runAgentLoop(
        {
          profile,
          approval: context.profile.approval,
          approvalMode: context.approvalMode,
          approve: context.approve,
          identity: {
            runId: context.request.runId,
            activationId: context.request.activationId,
            attempt: context.request.attempt,
          },
          model,
          env: context.env,
          workspace: context.workspace,
          system: buildInstructions({
            profile: profile.instructions,
            memory: [],
            toolset: toolset.instructions,
            suffix: null,
          }),
          toolset,
          conversation: conv,
          signal,
          activity: forward,
          usage,
          idPrefix: prefix,
          titlePrefix: `${profile.name}: `,
          record: (r) => records.push(r),
          note: () => undefined,
        },
        deps,
      );
      if (result.ok) return { ok: true, output: result.text };
      return {
        ok: false,
        error: `sub-agent "${profile.name}" failed (${result.failure.class}): ${result.failure.message}`,
      };
    } catch (error) {
      return { ok: false, error: `sub-agent "${profile.name}" failed: ${describe(error)}` };
    } finally {
      total -= 1;
      running.set(profile.name, (running.get(profile.name) ?? 1) - 1);
      await toolset?.close().catch(() => undefined);
    }
  };
}

function nodeError(f: ModelFailure): {
  class: AgentErrorClass;
  message: string;
  retryable: boolean;
  traceback: null;
} {
  return {
    class: f.class,
    message: f.message,
    retryable: RETRYABLE_AGENT_CLASSES.has(f.class),
    traceback: null,
  };
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

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
