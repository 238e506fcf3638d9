import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { dirname, sep } from "node:path";
import { pythonExecutors } from "@icode/python-bridge";
import { type DiscoveredWorkflow, discoverWorkflows, readTarget, targetOf } from "@icode/workflow-discovery";
import { type Diagnostic, isWorkflowError } from "@icode/workflow-errors";
import {
  createRun,
  createSession,
  type FsRunRecorder,
  type HookWarning,
  loadSession,
  recoverOrphans,
  runHooks,
  type Session,
  sessionDir,
} from "@icode/workflow-records";
import {
  type AskHandler,
  type ControlResult,
  type EngineEvent,
  type EngineEventMap,
  type FailurePolicy,
  startRun,
  type WorkflowRun,
} from "@icode/workflow-scheduler";
import type { EngineContext } from "../context";
import { ReportBuilder } from "../validate/pipeline";
import { type PreparedWorkflow, prepareWorkflow } from "../validate/prepare";
import { systemClock } from "./clock";
import {
  type FinishedRun,
  type RejectedRun,
  type RunRejectionCode,
  type RunReport,
  rejected,
} from "./report";
import type { SessionTracker } from "./sessions";
import {
  checkTrust,
  confirmTrust,
  definitionDigest,
  encodedDefinition,
  environmentOf,
  type TrustCheck,
  untrustedMessage,
} from "./trust";

export const ENGINE_VERSION = "0.1.0";

export interface RunRequest {
  /** The workflow ID, as `icode workflow list` shows it. */
  workflowId: string;
  /** The start node's input text (default ""). */
  input?: string;
  /** Start a new run of this existing workflow session (its workflow must be `workflowId`). */
  sessionId?: string;
  /** Trust the workflow's current source and environment (saved for later runs). */
  trust?: boolean;
  /** An overall limit covering preview, loading and execution; `null`/absent: none. */
  timeoutSeconds?: number | null;
  /** What a node failure does: `fail` ends the run (the CLI), `pause` waits for `retryNode`. Default `fail`. */
  policy?: FailurePolicy;
  /** Forwards `ctx.ask()` questions; without it they fail with `ask_unavailable`. */
  ask?: AskHandler;
  /** Aborting cancels the run with reason `interrupted` (or rejects it, before it was accepted). */
  signal?: AbortSignal;
  /** The 60-second load-and-build limit, overridable for tests. */
  loadTimeoutMs?: number;
}

/** Notices outside the event stream: load output, hook warnings, the validation report of a rejection. */
export type RunNotice =
  | { kind: "load_output"; text: string; truncated: boolean }
  | { kind: "hook_warning"; warning: HookWarning }
  | { kind: "accepted"; session_id: string; run_id: string; workflow_id: string; title: string };

export type RunEvents = EngineEventMap & { notice: [RunNotice] };

/** A run in progress: its events, its result, and its control surface (usable once it was accepted). */
export interface ActiveRun {
  readonly events: EventEmitter<RunEvents>;
  readonly result: Promise<RunReport>;
  cancel(): ControlResult;
  retryNode(activationId: string): ControlResult;
  pause(): ControlResult;
  resume(): ControlResult;
  skipNode(activationId: string, note?: string): ControlResult;
  approveNode(activationId: string): ControlResult;
}

export function runWorkflow(request: RunRequest, ctx: EngineContext, tracker: SessionTracker): ActiveRun {
  const events = new EventEmitter<RunEvents>();
  let scheduled: WorkflowRun | null = null;
  const notStarted: ControlResult = {
    ok: false,
    code: "not_started",
    message: "the run has not started yet",
  };
  const control =
    <A extends unknown[]>(fn: (run: WorkflowRun, ...args: A) => ControlResult) =>
    (...args: A): ControlResult =>
      scheduled === null ? notStarted : fn(scheduled, ...args);
  const result = execute(request, ctx, tracker, events, (run) => {
    scheduled = run;
  });
  return {
    events,
    result,
    cancel: control((run) => run.cancel("user_cancelled")),
    retryNode: control((run, id: string) => run.retryNode(id)),
    pause: control((run) => run.pause()),
    resume: control((run) => run.resume()),
    skipNode: control((run, id: string, note?: string) => run.skipNode(id, { note: note ?? null })),
    approveNode: control((run, id: string) => run.approveNode(id)),
  };
}

async function execute(
  request: RunRequest,
  ctx: EngineContext,
  tracker: SessionTracker,
  events: EventEmitter<RunEvents>,
  started: (run: WorkflowRun) => void,
): Promise<RunReport> {
  const begin = Date.now();
  const deadline = request.timeoutSeconds == null ? null : begin + Math.round(request.timeoutSeconds * 1000);
  // One signal for everything before the run is accepted: the caller's interrupt or the deadline.
  const preparation = new AbortController();
  const onAbort = () => preparation.abort("interrupted");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const deadlineTimer =
    deadline === null ? null : setTimeout(() => preparation.abort("deadline_exceeded"), deadline - begin);
  const reject = (
    code: RunRejectionCode,
    message: string,
    extra: Partial<Parameters<typeof rejected>[2]> = {},
  ) => rejected(code, message, { duration: (Date.now() - begin) / 1000, ...extra });
  const aborted = () => {
    const why = preparation.signal.reason === "deadline_exceeded" ? "deadline_exceeded" : "interrupted";
    return reject(
      why,
      why === "deadline_exceeded"
        ? "the run timed out before it started"
        : "interrupted before the run started",
    );
  };

  let prepared: PreparedWorkflow | null = null;
  try {
    // The session, when one is named: its workspace and workflow are fixed.
    let session: Session | null = null;
    if (request.sessionId !== undefined) {
      try {
        session = loadSession(ctx.chrysHome, request.sessionId);
      } catch (error) {
        return reject("session_not_found", isWorkflowError(error) ? error.message : String(error), {
          hint: "list sessions in the configuration directory's sessions/ folder, or run without -s",
        });
      }
      if (session.workflow_id !== request.workflowId) {
        return reject(
          "spec_changed",
          `session ${session.session_id} runs workflow '${session.workflow_id}', not '${request.workflowId}'`,
          {
            session_id: session.session_id,
            hint: `run: icode workflow run ${session.workflow_id} -s ${session.session_id}`,
          },
        );
      }
      if (session.runs.length === 0) {
        return reject(
          "session_invalid",
          `session ${session.session_id} has no runs yet; start the workflow without -s`,
          {
            session_id: session.session_id,
          },
        );
      }
      recoverOrphans(sessionDir(ctx.chrysHome, session.session_id));
    }
    const workdirBase = session?.workspace ?? ctx.cwd;

    // Discovery by ID, from the session's workspace.
    const found = await discoverWorkflows({
      cwd: workdirBase,
      chrysHome: ctx.chrysHome,
      builtinDir: ctx.builtinDir,
      uid: ctx.uid,
    });
    const workflow = found.workflows.find((w) => w.id === request.workflowId);
    if (workflow === undefined) {
      const skipped = found.skipped.filter((s) => s.id === request.workflowId);
      return reject(
        "workflow_not_found",
        skipped.length > 0
          ? `workflow '${request.workflowId}' cannot be read: ${skipped.map((s) => s.reason.message).join("; ")}`
          : `no workflow with ID '${request.workflowId}'`,
        {
          session_id: session?.session_id ?? null,
          diagnostics: skipped.map((s) => s.reason),
          hint: "list workflows with: icode workflow list",
        },
      );
    }
    if (session !== null && session.workflow_path !== workflow.path) {
      return reject(
        "spec_changed",
        `session ${session.session_id} was created for ${session.workflow_path}, but workflow '${workflow.id}' is now ${workflow.path}`,
        { session_id: session.session_id, hint: "start a new session (run without -s)" },
      );
    }
    const workspace = session?.workspace ?? workspaceOf(workflow, ctx.cwd);

    // Preview: the validate stages, with the worker kept warm for the run. Trust is checked before any
    // workflow code runs (source and environment), and again once the definition is built.
    const report = new ReportBuilder(workflow.path);
    const target = targetOf(workflow);
    report.stage("resolve", []);
    let refusal: RejectedRun | null = null;
    const refuse = (check: TrustCheck) =>
      reject("trust_required", untrustedMessage(workflow.id, workflow.path, check), {
        session_id: session?.session_id ?? null,
        hint: `review the source, then run again with --trust: icode workflow run ${workflow.id} --trust`,
      });
    prepared = await prepareWorkflow(target, ctx, report, {
      signal: preparation.signal,
      workdir: workspace,
      loadTimeoutMs: request.loadTimeoutMs,
      beforeLoad: async (subject) => {
        const early = await checkTrust(subject, ctx, null);
        if (early.required && !early.trusted && !request.trust) {
          refusal = refuse(early);
          return false;
        }
        return true;
      },
    });
    if (preparation.signal.aborted) return aborted();
    if (refusal !== null) return refusal;
    const loadOutput = report.report.output;
    if (loadOutput.text !== "") events.emit("notice", { kind: "load_output", ...loadOutput });
    if (prepared === null) {
      const errors = report.report.diagnostics.filter((d) => d.severity === "error");
      return reject(
        "validation_failed",
        `workflow '${workflow.id}' cannot be loaded: ${errors[0]?.message ?? "validation failed"}`,
        {
          session_id: session?.session_id ?? null,
          diagnostics: report.report.diagnostics,
          load_output: loadOutput,
        },
      );
    }

    const trust = await checkTrust(prepared, ctx, prepared.definition);
    if (trust.required && !trust.trusted) {
      if (!request.trust) return { ...refuse(trust), load_output: loadOutput };
      try {
        await confirmTrust(prepared, prepared.definition, ctx);
      } catch (error) {
        if (!isWorkflowError(error)) throw error;
        return reject("trust_write_failed", error.message, {
          session_id: session?.session_id ?? null,
          hint: error.hint ?? null,
        });
      }
    }
    // Files are checked again at run start: a change during loading is refused.
    const reread = await readTarget(target, { uid: ctx.uid });
    if (reread.sourceDigest !== prepared.sourceDigest) {
      return reject(
        "source_changed",
        `workflow '${workflow.id}' changed while it was loading; run it again`,
        {
          session_id: session?.session_id ?? null,
        },
      );
    }
    if (preparation.signal.aborted) return aborted();

    // Accepted: from here on the run is recorded and ends with an outcome.
    const restored = session !== null && !tracker.has(session.session_id);
    if (session === null) {
      session = createSession(ctx.chrysHome, {
        workflow_id: workflow.id,
        workflow_path: workflow.path,
        source: workflow.source,
        workspace,
      });
    }
    const inputText = request.input ?? "";
    const py = prepared.worker.hello.python;
    const recorder: FsRunRecorder = createRun(ctx.chrysHome, session.session_id, {
      definition: prepared.definition,
      definitionJson: encodedDefinition(prepared.definition).json,
      environment: {
        interpreter: prepared.declaredPython,
        interpreter_kind: prepared.interpreterKind,
        executable: py.executable,
        implementation: py.implementation,
        version: py.version,
        platform: py.platform,
        machine: py.machine,
        libc: py.libc,
        source_digest: prepared.sourceDigest,
        environment_fingerprint: await environmentOf(prepared),
        definition_digest: definitionDigest(prepared.definition),
      },
      input: { text: inputText, data: null },
      source: snapshotOf(prepared),
      engine_version: ENGINE_VERSION,
    });
    const runId = recorder.runId;
    events.emit("notice", {
      kind: "accepted",
      session_id: session.session_id,
      run_id: runId,
      workflow_id: workflow.id,
      title: prepared.definition.title,
    });

    const hookBase = { workflow_id: workflow.id, session_id: session.session_id, cwd: workspace };
    const hook = async (promise: ReturnType<typeof runHooks>) => {
      const { warnings } = await promise;
      for (const warning of warnings) events.emit("notice", { kind: "hook_warning", warning });
    };
    if (!tracker.has(session.session_id)) {
      tracker.add(session.session_id, workflow.id, workspace);
      await hook(
        restored
          ? runHooks(
              "session_restored",
              { ...hookBase, restored_session_id: session.session_id },
              { chrysHome: ctx.chrysHome, env: ctx.env },
            )
          : runHooks("session_start", hookBase, { chrysHome: ctx.chrysHome, env: ctx.env }),
      );
    }
    await hook(
      runHooks(
        "workflow_run_start",
        { ...hookBase, run_id: runId, input_text: inputText },
        { chrysHome: ctx.chrysHome, env: ctx.env },
      ),
    );

    // A record that cannot be written ends the run as storage_failed: a node diagnostics file that fails
    // makes the next event write fail too, which the scheduler turns into that outcome.
    let storageError: unknown = null;
    const executors = pythonExecutors(prepared.worker, {
      beforeSend: () => {
        try {
          recorder.flushPending();
        } catch (error) {
          storageError ??= error;
        }
      },
      onOutput: (output) => {
        try {
          recorder.writeNodeDiagnostics({
            node_id: output.nodeId,
            activation_id: output.activationId,
            attempt: output.attempt,
            phases: [{ phase: output.phase, stdout: output.stdout }],
          });
        } catch (error) {
          storageError ??= error;
        }
      },
    });
    const sink = {
      write(event: EngineEvent) {
        if (storageError !== null) throw storageError;
        recorder.appendSoon(event);
        try {
          events.emit(event.type, event as never);
        } catch {
          // A listener's failure is the embedder's bug; it must not look like a storage failure.
        }
      },
      flush: () => recorder.flush(),
    };
    let run: WorkflowRun;
    try {
      run = startRun({
        runId,
        definition: prepared.definition,
        input: { text: inputText, data: null },
        executors,
        clock: systemClock,
        sink,
        policy: request.policy ?? "fail",
        deadline,
        ...(request.ask === undefined ? {} : { ask: request.ask }),
      });
    } catch (error) {
      // The run could not start (an engine defect): close its log; restoring the session marks it orphaned.
      recorder.close();
      throw error;
    }
    started(run);
    if (deadlineTimer !== null) clearTimeout(deadlineTimer);
    request.signal?.removeEventListener("abort", onAbort);
    const interrupt = () => run.cancel("interrupted");
    if (request.signal?.aborted) interrupt();
    request.signal?.addEventListener("abort", interrupt, { once: true });
    const worker = prepared.worker;

    const outcome = await run.result;
    request.signal?.removeEventListener("abort", interrupt);
    const native = worker.native();
    let diagnostics: FinishedRun["diagnostics"] = { load: loadOutput, native };
    let ended = outcome;
    try {
      recorder.finish({ outputs: outcome.outputs, output: { load: loadOutput, native } });
    } catch (error) {
      // The final outputs could not be recorded: the run's records are incomplete, whatever its outcome.
      const message = error instanceof Error ? error.message : String(error);
      diagnostics = { error: message };
      ended = {
        ...outcome,
        outcome: "storage_failed",
        reason: "",
        error: message,
        error_class: "storage_failed",
      };
    }
    await worker.close();
    await hook(
      runHooks(
        "workflow_run_end",
        { ...hookBase, run_id: runId, outcome: ended.outcome, reason: ended.reason },
        { chrysHome: ctx.chrysHome, env: ctx.env },
      ),
    );
    return {
      status: "finished",
      session_id: session.session_id,
      run_id: runId,
      outcome: ended.outcome,
      reason: ended.reason,
      node_id: ended.node_id,
      error: ended.error,
      error_class: ended.error_class,
      duration: (Date.now() - begin) / 1000,
      diagnostics,
      outputs: outcome.outputs,
      run_dir: recorder.dir,
    };
  } catch (error) {
    if (preparation.signal.aborted) return aborted();
    if (isWorkflowError(error) && error.code === "storage_failed") {
      return reject("storage_failed", error.message);
    }
    throw error;
  } finally {
    if (deadlineTimer !== null) clearTimeout(deadlineTimer);
    request.signal?.removeEventListener("abort", onAbort);
    await prepared?.worker.close();
  }
}

/**
 * The working directory of a new session: a project workflow runs in its project (the folder holding
 * `.chrys/workflows/`); built-in and global workflows in the current directory.
 */
function workspaceOf(workflow: DiscoveredWorkflow, cwd: string): string {
  if (workflow.source !== "project") return cwd;
  const marker = `${sep}.chrys${sep}workflows${sep}`;
  const at = workflow.path.lastIndexOf(marker);
  return at === -1 ? dirname(workflow.path) : workflow.path.slice(0, at);
}

function snapshotOf(prepared: PreparedWorkflow) {
  if (prepared.target.layout === "file") return { path: prepared.target.entry };
  return {
    files: prepared.files.map((f) => ({ path: f.relPath, content: readFileSync(f.absPath) })),
  };
}

export type { Diagnostic };
