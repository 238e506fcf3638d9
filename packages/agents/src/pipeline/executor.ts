import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentConfig } from "@icode/agent-profiles";
import {
  checkHandoff,
  type Handoff,
  type NodeExecutor,
  type NodeOutcome,
  type NodeRunRequest,
  parseHandoffFromText,
} from "@icode/pipelines";
import type { TokenUsage } from "@icode/workflow-scheduler";
import type { AcpRunnerOptions } from "../acp/run-attempt";
import type { ApprovalCallback } from "../attempt";
import { AgentTranscriptSchema } from "../transcript";
import { AcpNodeSession } from "./acp-session";
import { NodeFailure } from "./codes";
import { correctionPrompt, DEFAULT_CORRECTION_ROUNDS, handoffInstructions } from "./handoff-prompt";
import { NativeNodeSession, type NativeSessionOptions, NativeShared } from "./native-session";
import { type ResolvedNode, resolveNode } from "./resolve";
import type { HandoffCall, NodeSession, SessionBinding, SessionSetup } from "./session";
import { commitWorktree, ensureWorktree, type NodeWorktree, placeInWorktree, repositoryOf } from "./worktree";

export interface PipelineNodeExecutorOptions {
  /** Profiles, models and settings, as `loadAgentConfig` found them. */
  readonly config: AgentConfig;
  readonly chrysHome: string;
  readonly homeDir: string;
  /** Asked about calls that need approval when a node does not skip permissions; without it they are refused. */
  readonly approve?: ApprovalCallback;
  /** Correction rounds per attempt before a mismatching handoff blocks the node. Default 2. */
  readonly correctionRounds?: number;
  /** ACP adapter options (grace periods, connection tries). */
  readonly acp?: Omit<AcpRunnerOptions, "mcpServers">;
  /** Native loop options (the toolset builder, retries' sleep). */
  readonly native?: NativeSessionOptions;
}

type Outcome = NodeOutcome;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The pipeline driver's `NodeExecutor` on the agent runtimes (docs/pipelines.md, "Running a node"): each
 * attempt resolves its runtime, profile, model, directory, approval mode, effort and skills; works in a git
 * worktree of its own when `isolate` says so; runs in a new agent session or continues the one
 * `reuseSession` names; and ends with a handoff checked against the node's schema, correction rounds in
 * the same session included. Sessions stay open for the run until `stopSessions` (or `close`).
 */
export function createPipelineNodeExecutor(options: PipelineNodeExecutorOptions): NodeExecutor {
  const rounds = Math.max(0, options.correctionRounds ?? DEFAULT_CORRECTION_ROUNDS);
  const sessions = new Map<string, NodeSession>();
  /** Attempts working in each repository now (runId + repository root → count): the default isolate policy. */
  const inRepository = new Map<string, number>();
  /**
   * The repository of each node directory, per run (runId + directory → its root or null): asked of git once,
   * not on every attempt (the pipeline bench's profile found a `git rev-parse` per attempt).
   */
  const repositories = new Map<string, Promise<string | null>>();
  let counter = 0;
  const shared = new NativeShared();

  async function workspaceFor(
    request: NodeRunRequest,
    resolved: ResolvedNode,
    repoKey: { key: string | null },
  ): Promise<{ workspace: string; worktree: NodeWorktree | null }> {
    const cacheKey = `${request.runId}\u0000${resolved.cwd}`;
    let lookup = repositories.get(cacheKey);
    if (lookup === undefined) {
      lookup = repositoryOf(resolved.cwd);
      repositories.set(cacheKey, lookup);
    }
    const repository = await lookup;
    const key = repository === null ? null : `${request.runId}\u0000${repository}`;
    const others = key === null ? 0 : (inRepository.get(key) ?? 0);
    if (key !== null) {
      inRepository.set(key, others + 1);
      repoKey.key = key;
    }
    const isolate = request.node.isolate ?? (repository !== null && others > 0);
    if (!isolate) return { workspace: resolved.cwd, worktree: null };
    if (repository === null) {
      throw new NodeFailure(
        "pipeline_node_isolate_failed",
        `node "${request.node.id}" has isolate: true, but its directory ${resolved.cwd} is not in a git repository`,
      );
    }
    const worktree = await ensureWorktree({
      repository,
      runDir: request.runDir,
      runId: request.runId,
      nodeId: request.node.id,
    });
    return { workspace: placeInWorktree(worktree, resolved.cwd), worktree };
  }

  async function openSession(
    request: NodeRunRequest,
    resolved: ResolvedNode,
    binding: SessionBinding,
    attemptDir: string,
    place: { workspace: string; worktree: NodeWorktree | null },
  ): Promise<NodeSession> {
    counter += 1;
    const ref = `${resolved.runtime}:${request.runId}/${request.node.id}#${request.attempt}.${counter}`;
    const setup: SessionSetup = {
      config: options.config,
      profile: resolved.profile,
      model: resolved.runtime === "native" ? resolved.model.id : resolved.modelId,
      workspace: place.workspace,
      worktree: place.worktree,
      env: request.env,
      chrysHome: options.chrysHome,
      homeDir: options.homeDir,
    };
    if (resolved.runtime === "acp") {
      return AcpNodeSession.open({
        ref,
        setup,
        binding,
        attemptDir,
        effort: resolved.effort,
        acp: options.acp ?? {},
      });
    }
    return NativeNodeSession.open({
      ref,
      setup,
      binding,
      model: resolved.model,
      native: options.native ?? {},
      shared,
    });
  }

  async function runNode(request: NodeRunRequest, signal: AbortSignal): Promise<Outcome> {
    const { node } = request;
    const attemptDir = join(request.runDir, "nodes", node.id, `attempt-${request.attempt}`);
    const transcriptRel = join("nodes", node.id, `attempt-${request.attempt}`, "transcript.json");
    const emit = (event: Parameters<NodeRunRequest["onEvent"]>[0]) => {
      try {
        request.onEvent(event);
      } catch {
        // onEvent must not throw; the attempt goes on
      }
    };
    let session: NodeSession | null = null;
    let corrections = 0;
    let transcript: string | null = null;
    let usage: TokenUsage | null = null;
    const repoKey: { key: string | null } = { key: null };
    const record = () => ({ session_ref: null as string | null, corrections, transcript, usage });

    const finishTranscript = (outcome: string) => {
      if (session === null) return;
      try {
        const t = AgentTranscriptSchema.parse(session.transcript(outcome));
        writeFileSync(join(request.runDir, transcriptRel), `${JSON.stringify(t, null, 2)}\n`);
        transcript = transcriptRel;
      } catch (error) {
        emit({
          type: "activity",
          activity: {
            kind: "warning",
            code: "pipeline_node_transcript_failed",
            message: `the attempt's transcript could not be written: ${describe(error)}`,
          },
        });
      }
      usage = session.usage();
    };

    try {
      mkdirSync(attemptDir, { recursive: true });
      if (signal.aborted) return { ...record(), status: "canceled" };
      const resolved = resolveNode({
        config: options.config,
        node,
        launchCwd: request.launchCwd,
        launchPermissionMode: request.launchPermissionMode,
      });
      const binding: SessionBinding = {
        runId: request.runId,
        nodeId: node.id,
        attempt: request.attempt,
        outputSchema: request.outputSchema,
        signal,
        activity: (activity) => emit({ type: "activity", activity }),
        approvalMode: resolved.approvalMode,
        ...(options.approve === undefined ? {} : { approve: options.approve }),
      };
      for (const w of resolved.warnings) emit({ type: "activity", activity: { kind: "warning", ...w } });

      if (request.reuseSession !== null) {
        const found = sessions.get(request.reuseSession);
        if (found === undefined || !found.alive() || found.busy) {
          if (found !== undefined && !found.alive()) sessions.delete(found.ref);
          throw new NodeFailure(
            "pipeline_node_session_unavailable",
            found === undefined
              ? `session ${request.reuseSession} is not held by this executor (it was never started here, its sessions were stopped, or the engine restarted)`
              : found.busy
                ? `session ${request.reuseSession} is working on another node's prompt`
                : `session ${request.reuseSession} has ended: its agent is gone`,
          );
        }
        if (node.isolate !== null && node.isolate !== (found.setup.worktree !== null)) {
          throw new NodeFailure(
            "pipeline_node_isolate_failed",
            `node "${node.id}" has isolate: ${node.isolate}, but it continues session ${found.ref}, which works ${found.setup.worktree === null ? "outside a worktree" : `in the worktree ${found.setup.worktree.path}`}; a continued session keeps its directory`,
          );
        }
        const kept: string[] = [];
        if (found.setup.profile.name !== resolved.profile.name)
          kept.push(`profile ${found.setup.profile.name}`);
        if (found.runtime !== resolved.runtime) kept.push(`runtime ${found.runtime}`);
        const wantModel = resolved.runtime === "native" ? resolved.model.id : resolved.modelId;
        if (found.setup.model !== wantModel)
          kept.push(`model ${found.setup.model ?? "(the agent's default)"}`);
        if (kept.length > 0) {
          emit({
            type: "activity",
            activity: {
              kind: "warning",
              code: "pipeline_node_session_kept_settings",
              message: `node "${node.id}" continues session ${found.ref}, which keeps its ${kept.join(", ")}`,
            },
          });
        }
        session = found;
        session.busy = true;
        session.bind(binding);
      } else {
        const place = await workspaceFor(request, resolved, repoKey);
        session = await openSession(request, resolved, binding, attemptDir, place);
        session.busy = true;
        sessions.set(session.ref, session);
      }
      const ref = session.ref;
      emit({ type: "running", session_ref: ref });

      let prompt = `${request.prompt}\n\n${handoffInstructions(request.outputSchema)}`;
      let outcome: Outcome | null = null;
      for (let round = 0; outcome === null; round++) {
        const turn = await session.turn(prompt);
        const blocked = turn.calls.findLast(
          (c): c is Extract<HandoffCall, { tool: "report_blocked" }> => c.tool === "report_blocked",
        );
        if (blocked !== undefined) {
          outcome = {
            ...record(),
            session_ref: ref,
            status: "blocked",
            reason: blocked.reason,
            handoff: null,
          };
          break;
        }
        const submitted = turn.calls.findLast((c) => c.tool === "submit_handoff");
        let problems: string;
        let problemList: string[];
        let candidate: Handoff | null = null;
        if (submitted !== undefined && submitted.tool === "submit_handoff") {
          const check = checkHandoff(submitted.handoff, request.outputSchema);
          if (check.ok) candidate = check.handoff;
          problems = check.ok ? "" : check.text;
          problemList = check.ok ? [] : check.text.split("\n");
        } else {
          const parsed = parseHandoffFromText(turn.text);
          if (parsed.ok) {
            const check = checkHandoff(parsed.handoff, request.outputSchema);
            if (check.ok) candidate = check.handoff;
            problems = check.ok ? "" : check.text;
            problemList = check.ok ? [] : check.text.split("\n");
          } else {
            problems = `no handoff: you did not call submit_handoff, and ${parsed.message}`;
            problemList = [problems];
          }
        }
        if (candidate !== null) {
          outcome = { ...record(), session_ref: ref, status: "succeeded", handoff: candidate };
          break;
        }
        if (round >= rounds) {
          outcome = {
            ...record(),
            session_ref: ref,
            status: "blocked",
            reason: `the handoff still does not match the output schema after ${rounds} correction round(s):\n${problems}`,
            handoff: null,
          };
          break;
        }
        corrections = round + 1;
        emit({ type: "correction", round: corrections, problems: problemList });
        prompt = correctionPrompt(problems, corrections, rounds);
      }

      const worktree = session.setup.worktree;
      if (worktree !== null) {
        const files = await commitWorktree(
          worktree,
          `icode: node ${node.id}, attempt ${request.attempt} of run ${request.runId}`,
        );
        if (outcome.status === "succeeded") {
          const current = outcome.handoff["artifacts"];
          if (current === undefined || Array.isArray(current)) {
            const own: unknown[] = current ?? [];
            const add = [worktree.branch, ...files].filter((a) => !own.includes(a));
            outcome = { ...outcome, handoff: { ...outcome.handoff, artifacts: [...own, ...add] } };
          } else {
            emit({
              type: "activity",
              activity: {
                kind: "warning",
                code: "pipeline_node_artifacts_not_listed",
                message: `the handoff's artifacts is not a list (the node's schema says otherwise), so branch ${worktree.branch} and the ${files.length} changed file(s) are not added to it`,
              },
            });
          }
        }
      }
      finishTranscript(outcome.status);
      session.busy = false;
      if (!request.keepSession) {
        // No node of the run continues this session: end it now rather than at the run's end (each one is
        // an agent process, and a run may have 200 nodes).
        sessions.delete(session.ref);
        await session.close().catch(() => undefined);
        return { ...outcome, session_ref: null, corrections, transcript, usage };
      }
      return { ...outcome, corrections, transcript, usage };
    } catch (error) {
      const canceled = signal.aborted;
      let failure: { code: string; message: string };
      if (error instanceof NodeFailure) failure = { code: error.code, message: error.message };
      else {
        const known = session === null ? null : await session.errorOf(error);
        failure =
          known !== null
            ? { code: known.class, message: known.message }
            : {
                code: "pipeline_node_internal_error",
                message: `the node executor failed unexpectedly: ${describe(error)}`,
              };
      }
      finishTranscript(canceled ? "canceled" : failure.code);
      const tree = session?.setup.worktree ?? null;
      if (tree !== null) {
        // What a failed or canceled attempt changed is kept on its branch too (best effort: the attempt
        // has failed already).
        await commitWorktree(
          tree,
          `icode: node ${node.id}, attempt ${request.attempt} of run ${request.runId} (${canceled ? "canceled" : "failed"})`,
        ).catch(() => []);
      }
      if (session !== null) {
        // A session whose attempt failed or was canceled is not continued: its turn ended half-way.
        sessions.delete(session.ref);
        session.busy = false;
        await session.close().catch(() => undefined);
      }
      const base = { session_ref: null, corrections, transcript, usage };
      return canceled ? { ...base, status: "canceled" } : { ...base, status: "failed", error: failure };
    } finally {
      if (repoKey.key !== null) {
        const n = (inRepository.get(repoKey.key) ?? 1) - 1;
        if (n <= 0) inRepository.delete(repoKey.key);
        else inRepository.set(repoKey.key, n);
      }
    }
  }

  return {
    runNode,
    async stopSessions(runId) {
      const mine = [...sessions.values()].filter((s) => s.runId === runId);
      for (const s of mine) sessions.delete(s.ref);
      for (const key of repositories.keys()) if (key.startsWith(`${runId}\u0000`)) repositories.delete(key);
      await Promise.all(mine.map((s) => s.close().catch(() => undefined)));
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      repositories.clear();
      await Promise.all(all.map((s) => s.close().catch(() => undefined)));
      await shared.close();
    },
  };
}
