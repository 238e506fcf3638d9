import type { ProfileTrust } from "@icode/agent-profiles";
import {
  checkTrust,
  confirmTrust,
  encodedDefinition,
  sha256Hex,
  untrustedMessage,
} from "@icode/workflow-discovery";
import { isWorkflowError } from "@icode/workflow-errors";
import type { HookRunResult, HookWarning, RunRecorder, Session } from "@icode/workflow-records";
import { runHooks } from "@icode/workflow-records";
import { startRun, type WorkflowRun } from "@icode/workflow-scheduler";
import { profilesDigestOf, projectProfilesStartingPrograms } from "../agents/bindings";
import { checkWorkflowModel } from "../agents/workflow-model";
import type { RunContext } from "../context";
import type { FoundWorkflow, LoaderWarning, PreparedWorkflow, WorkflowLoader } from "../loader";
import type { CheckedRunRequest, RunCallbacks } from "../request";
import { ENGINE_VERSION } from "../version";
import { systemClock } from "./clock";
import { HostSink } from "./host-sink";
import type { FinishedRun, Refusal, RejectedRun, RunReport } from "./report";
import type { RunController } from "./run-handle";
import type { SessionTracker } from "./sessions";

/** Everything a run needs from the engine around it. */
export interface RunEnvironment {
  readonly ctx: RunContext;
  readonly loader: WorkflowLoader;
  readonly sessions: SessionTracker;
}

/**
 * One run, as a sequence of named steps: resolve the session, admit the workflow (find, load, check trust),
 * open its records, schedule it, finish. Each step either hands the next what it needs or refuses the run;
 * nothing is recorded and no hook fires before the run is admitted. The loader is the only part that knows
 * what kind of workflow this is.
 */
export async function executeRun(
  controller: RunController,
  request: CheckedRunRequest,
  callbacks: RunCallbacks,
  env: RunEnvironment,
): Promise<RunReport> {
  const begin = Date.now();
  const deadline = request.timeoutSeconds === null ? null : begin + Math.round(request.timeoutSeconds * 1000);
  const stop = new StopSignal(controller, callbacks.signal, deadline);
  let prepared: PreparedWorkflow | null = null;
  const refuse = (refusal: Refusal, sessionId: string | null = null): RejectedRun => ({
    status: "rejected",
    run_id: controller.runId,
    code: refusal.code,
    message: refusal.message,
    hint: refusal.hint ?? null,
    session_id: sessionId,
    duration: (Date.now() - begin) / 1000,
    diagnostics: [...(refusal.diagnostics ?? [])],
    load_output: refusal.loadOutput ?? null,
  });
  try {
    const session = await resolveSession(request, env);
    if ("code" in session) return refuse(session);
    const sessionId = session.session?.session_id ?? null;
    const admission = await admit(request, session.session, env, stop, (p) => (prepared = p));
    if (stop.refusal() !== null) return refuse(stop.refusal()!, sessionId);
    if ("code" in admission) return refuse(admission, sessionId);
    const records = await openRecords(controller, request, session, admission, env);
    const { run, release } = await schedule(
      controller,
      request,
      callbacks,
      admission,
      records,
      env,
      deadline,
    );
    stop.running(run);
    try {
      return await finish(controller, run, admission, records, env, begin);
    } finally {
      await release();
    }
  } catch (error) {
    if (stop.refusal() !== null) return refuse(stop.refusal()!);
    if (isWorkflowError(error) && error.code === "storage_failed") {
      return refuse({ code: "storage_failed", message: error.message, hint: error.hint ?? null });
    }
    throw error;
  } finally {
    stop.dispose();
    await (prepared as PreparedWorkflow | null)?.close();
  }
}

// ================================================================ 1. resolve the session

type ResolvedSession = { session: Session | null; recovered: { run_id: string; pid: number }[] };

/** The session named by the request (its workspace and workflow are fixed), with its orphaned runs ended. */
async function resolveSession(
  request: CheckedRunRequest,
  env: RunEnvironment,
): Promise<ResolvedSession | Refusal> {
  if (request.sessionId === undefined) {
    // A new session's default model must exist now, not only when an agent node happens to need it.
    if (request.model !== null) {
      const { ctx } = env;
      const refusal = await checkWorkflowModel(request.model, {
        chrysHome: ctx.chrysHome,
        cwd: ctx.cwd,
        env: ctx.env,
        homeDir: ctx.homeDir,
      });
      if (refusal !== null) return refusal;
    }
    return { session: null, recovered: [] };
  }
  if (request.model !== null) {
    return {
      code: "request_invalid",
      message: `model: sets the default model of a new session; session ${request.sessionId} keeps the one saved with it`,
      hint: "leave out the model to run in the session, or start a new session with it",
    };
  }
  const store = env.ctx.store;
  let session: Session;
  try {
    session = await store.loadSession(request.sessionId);
  } catch (error) {
    return { code: "session_not_found", message: isWorkflowError(error) ? error.message : String(error) };
  }
  if (session.workflow_id !== request.workflowId) {
    return {
      code: "spec_changed",
      message: `session ${session.session_id} runs workflow '${session.workflow_id}', not '${request.workflowId}'`,
      hint: `start a run of '${session.workflow_id}' in it, or start a new session`,
    };
  }
  // Run folders are the truth: a run the session file does not list (a crash) still counts.
  if ((await store.listRuns(session.session_id)).length === 0) {
    return {
      code: "session_invalid",
      message: `session ${session.session_id} has no runs yet; start the workflow in a new session`,
    };
  }
  const recovered = await store.recoverOrphans(session.session_id);
  return { session, recovered: recovered.map((r) => ({ run_id: r.run_id, pid: r.pid })) };
}

// ================================================================ 2. admit

interface Admitted {
  readonly found: FoundWorkflow;
  readonly workspace: string;
  readonly prepared: PreparedWorkflow;
  readonly warnings: LoaderWarning[];
}

/** Finds and loads the workflow, with trust checked before its code runs and again once it has loaded. */
async function admit(
  request: CheckedRunRequest,
  session: Session | null,
  env: RunEnvironment,
  stop: StopSignal,
  hold: (prepared: PreparedWorkflow) => void,
): Promise<Admitted | Refusal> {
  const { ctx, loader } = env;
  const found = await loader.find(request.workflowId, session?.workspace ?? ctx.cwd);
  if ("code" in found) return found;
  if (session !== null && session.workflow_path !== found.path) {
    return {
      code: "spec_changed",
      message: `session ${session.session_id} was created for ${session.workflow_path}, but workflow '${found.id}' is now ${found.path}`,
      hint: "start a new session",
    };
  }
  const workspace = session?.workspace ?? found.workspace;
  const warnings: LoaderWarning[] = [];
  const trustRefusal = (message: string): Refusal => ({
    code: "trust_required",
    message,
    hint: "review the workflow's source, then run it again with trust confirmed",
  });
  const prepared = await loader.prepare(found, {
    workspace,
    signal: stop.signal,
    loadTimeoutMs: request.loadTimeoutMs,
    workflowDefaultModel: session?.settings.model ?? request.model,
    warn: (warning) => warnings.push(warning),
    async trustGate(subject) {
      const check = await checkTrust(subject, {
        chrysHome: ctx.chrysHome,
        uid: ctx.uid,
        definitionDigest: null,
      });
      if (!check.required || check.trusted || request.trust) return null;
      const programs = await projectProfilesStartingPrograms({
        chrysHome: ctx.chrysHome,
        cwd: workspace,
        env: ctx.env,
        homeDir: ctx.homeDir,
      });
      return trustRefusal(untrustedMessage(subject, check) + programsNote(programs));
    },
  });
  if ("code" in prepared) return prepared;
  hold(prepared);
  if (stop.refusal() !== null) return stop.refusal()!;
  const { digest } = encodedDefinition(prepared.definition);
  const subject = prepared.trust;
  const trusted = prepared.agents?.trusted ?? [];
  const profilesDigest = profilesDigestOf(trusted, sha256Hex);
  const check = await checkTrust(subject, {
    chrysHome: ctx.chrysHome,
    uid: ctx.uid,
    definitionDigest: digest,
    profilesDigest,
  });
  if (check.required && !check.trusted) {
    if (!request.trust) {
      return {
        ...trustRefusal(untrustedMessage(subject, check) + programsNote(trusted)),
        loadOutput: prepared.loadOutput,
      };
    }
    try {
      await confirmTrust(subject, {
        chrysHome: ctx.chrysHome,
        title: prepared.definition.title,
        definitionDigest: digest,
        profilesDigest,
      });
    } catch (error) {
      if (!isWorkflowError(error)) throw error;
      return { code: "trust_write_failed", message: error.message, hint: error.hint ?? null };
    }
  }
  // Files are checked again at admission: a change while the workflow was loading refuses the run.
  if (!(await prepared.unchanged())) {
    return {
      code: "source_changed",
      message: `workflow '${found.id}' changed while it was loading; run it again`,
    };
  }
  if (stop.refusal() !== null) return stop.refusal()!;
  return { found, workspace, prepared, warnings };
}

// ================================================================ 3. open the records

interface OpenRecords {
  readonly session: Session;
  readonly recorder: RunRecorder;
  readonly sink: HostSink;
  readonly hookBase: { workflow_id: string; session_id: string; cwd: string };
  /** Non-blocking hooks still running; their warnings are reported after the run. */
  readonly background: Promise<HookWarning[]>[];
}

/**
 * The run is accepted: its session (new, or the one named), its run record, the first events (what it is,
 * what loading printed, what recovery found, warnings), then the session and run-start hooks.
 */
async function openRecords(
  controller: RunController,
  request: CheckedRunRequest,
  resolved: ResolvedSession,
  admitted: Admitted,
  env: RunEnvironment,
): Promise<OpenRecords> {
  const { ctx, sessions } = env;
  const { found, prepared, workspace } = admitted;
  const store = ctx.store;
  const restored = resolved.session !== null && !sessions.has(resolved.session.session_id);
  const session =
    resolved.session ??
    (await store.createSession({
      workflow_id: found.id,
      workflow_path: found.path,
      source: found.source,
      workspace,
      settings: { model: request.model },
    }));
  const encoded = encodedDefinition(prepared.definition);
  const recorder = await store.createRun(session.session_id, {
    run_id: controller.runId,
    definition: prepared.definition,
    definitionJson: encoded.json,
    environment: { ...prepared.environment, definition_digest: encoded.digest },
    input: { text: request.input, data: null },
    source: prepared.source,
    engine_version: ENGINE_VERSION,
  });
  controller.accepted(session.session_id, recorder);
  const sink = new HostSink(controller.runId, recorder, (event) => controller.emit(event));
  sink.host({
    type: "run_accepted",
    session_id: session.session_id,
    workflow_id: found.id,
    title: prepared.definition.title,
    workflow_kind: env.loader.kind,
    source: found.source,
    path: found.path,
    location: recorder.location,
  });
  if (prepared.loadOutput.text !== "" || prepared.loadOutput.truncated) {
    sink.host({ type: "load_output", output: prepared.loadOutput });
  }
  if (resolved.recovered.length > 0) sink.host({ type: "runs_recovered", runs: resolved.recovered });
  for (const warning of admitted.warnings) {
    sink.host({ type: "warning", ...warning, detail: warning.detail ?? {} });
  }

  const hookBase = { workflow_id: found.id, session_id: session.session_id, cwd: workspace };
  const background: Promise<HookWarning[]>[] = [];
  const hook = async (started: Promise<HookRunResult>) => {
    const { warnings, background: later } = await started;
    for (const warning of warnings) sink.host(hookWarning(warning));
    background.push(later);
  };
  const hooks = { chrysHome: ctx.chrysHome, env: ctx.env };
  if (!sessions.has(session.session_id)) {
    sessions.add(session.session_id, found.id, workspace);
    await hook(
      restored
        ? runHooks("session_restored", { ...hookBase, restored_session_id: session.session_id }, hooks)
        : runHooks("session_start", hookBase, hooks),
    );
  }
  await hook(
    runHooks(
      "workflow_run_start",
      { ...hookBase, run_id: controller.runId, input_text: request.input },
      hooks,
    ),
  );
  await sink.flushPending();
  return { session, recorder, sink, hookBase, background };
}

// ================================================================ 4. schedule

async function schedule(
  controller: RunController,
  request: CheckedRunRequest,
  callbacks: RunCallbacks,
  admitted: Admitted,
  records: OpenRecords,
  env: RunEnvironment,
  deadline: number | null,
): Promise<{ run: WorkflowRun; release: () => Promise<void> }> {
  const { sink, recorder } = records;
  let release = async () => {};
  const executors = admitted.prepared.executors({
    beforeSend: () => sink.storeQueued(),
    nodeDiagnostics: (record) => sink.guard(() => recorder.writeNodeDiagnostics(record)),
  });
  const bindings = admitted.prepared.agents;
  if (bindings !== null && bindings.agents.size > 0) {
    // Loaded only for a run that has agent nodes: the model and protocol SDKs stay out of everything else.
    const { createAgentExecutor, defaultRunners } = await import("@icode/workflow-agents");
    const { ctx } = env;
    const agents = createAgentExecutor({
      config: bindings.config,
      agents: bindings.agents,
      workspace: admitted.workspace,
      env: ctx.env,
      chrysHome: ctx.chrysHome,
      homeDir: ctx.homeDir,
      approvalMode: request.approvalMode,
      ...(callbacks.approve === undefined ? {} : { approve: callbacks.approve }),
      transcript: (record) => sink.guard(() => recorder.writeTranscript(record)),
      runners: defaultRunners(),
    });
    executors.runAgent = agents.runAgent;
    release = () => agents.close();
  }
  let run: WorkflowRun;
  try {
    run = startRun({
      runId: controller.runId,
      definition: admitted.prepared.definition,
      input: { text: request.input, data: null },
      executors,
      clock: systemClock,
      sink,
      policy: request.policy,
      deadline,
      approvals: request.approvals,
      maxConcurrentAgents: request.maxConcurrentAgents ?? env.ctx.maxConcurrentAgents,
      acceptAnswers: request.acceptAnswers,
      firstSeq: sink.nextSeq,
      ...(callbacks.ask === undefined ? {} : { ask: callbacks.ask }),
    });
  } catch (error) {
    // The run could not start (an engine defect): close its log; restoring the session marks it orphaned.
    void records.recorder.close().catch(() => undefined);
    throw error;
  }
  controller.scheduled(run);
  return { run, release };
}

// ================================================================ 5. finish

/**
 * The run ended: its outputs are stored (a failure there makes it `storage_failed`, recorded as its last end
 * event when the log can still take it), the worker is let go, the run-end hook fires, and the warnings of
 * every hook of the run are recorded once.
 */
async function finish(
  controller: RunController,
  run: WorkflowRun,
  admitted: Admitted,
  records: OpenRecords,
  env: RunEnvironment,
  begin: number,
): Promise<FinishedRun> {
  const { recorder, sink } = records;
  const result = await run.result;
  const native = admitted.prepared.native();
  let ended = result;
  let diagnostics: FinishedRun["diagnostics"] = { load: admitted.prepared.loadOutput, native };
  try {
    await recorder.writeOutputs({ outputs: result.outputs, output: diagnostics });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    diagnostics = { error: message };
    if (result.outcome !== "storage_failed") {
      ended = {
        ...result,
        outcome: "storage_failed",
        reason: "",
        node_id: "",
        activation_id: null,
        error: message,
        error_class: "storage_failed",
      };
      await sink.last({ type: "workflow_run_end", ...ended });
    }
  }
  await admitted.prepared.close();
  const hooks = { chrysHome: env.ctx.chrysHome, env: env.ctx.env };
  const end = await runHooks(
    "workflow_run_end",
    { ...records.hookBase, run_id: controller.runId, outcome: ended.outcome, reason: ended.reason },
    hooks,
  );
  const warnings = [...end.warnings];
  for (const later of [...records.background, end.background]) warnings.push(...(await later));
  for (const warning of onceEach(warnings)) sink.after(hookWarning(warning));
  await sink.close();
  return {
    status: "finished",
    session_id: records.session.session_id,
    run_id: controller.runId,
    outcome: ended.outcome,
    reason: ended.reason,
    node_id: ended.node_id,
    error: ended.error,
    activation_id: ended.activation_id,
    error_class: ended.error_class,
    outputs: result.outputs,
    duration: (Date.now() - begin) / 1000,
    diagnostics,
    location: recorder.location,
  };
}

/** The programs of the project agent profiles a refused run would start, for the trust message. */
function programsNote(trusted: readonly ProfileTrust[]): string {
  if (trusted.length === 0) return "";
  const lines = trusted.map(
    (t) =>
      `project agent profile '${t.name}' (${t.file ?? "?"}) starts ${t.programs.map((p) => [p.command, ...p.args].join(" ")).join("; ")}`,
  );
  return `; trusting it also trusts ${lines.join("; ")}`;
}

/** A hook's warning as the run's `warning` event. */
function hookWarning(warning: HookWarning) {
  return {
    type: "warning" as const,
    source: "hooks",
    code: warning.code,
    message: warning.message,
    detail: { event: warning.event, hook: warning.hook },
  };
}

/** Each problem once: a broken `hooks.json` is found by every hook event of a run, but it is one problem. */
function onceEach(warnings: HookWarning[]): HookWarning[] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key =
      w.code === "hooks_config_invalid"
        ? `${w.code}\u0000${w.message}`
        : `${w.code}\u0000${w.event}\u0000${w.hook}\u0000${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ================================================================ stopping before and during the run

/**
 * What stops a run: the caller's signal (`interrupted`), `cancel()` on the handle (its reason), and the
 * request's deadline (`deadline_exceeded`). Before the run is accepted they refuse it; once it runs they
 * cancel it with that reason.
 */
class StopSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | null;
  private run: WorkflowRun | null = null;
  private readonly onCallerAbort = () => this.stop("interrupted");
  private readonly onCancel: () => void;

  constructor(
    private readonly handle: RunController,
    private readonly callerSignal: AbortSignal | undefined,
    deadline: number | null,
  ) {
    this.onCancel = () => this.stop(String(handle.preparation.signal.reason ?? "user_cancelled"));
    handle.preparation.signal.addEventListener("abort", this.onCancel, { once: true });
    callerSignal?.addEventListener("abort", this.onCallerAbort, { once: true });
    this.timer =
      deadline === null
        ? null
        : setTimeout(() => this.stop("deadline_exceeded"), Math.max(0, deadline - Date.now()));
    if (callerSignal?.aborted) this.stop("interrupted");
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the run was stopped before it was accepted, as a refusal; `null` while it may go on. */
  refusal(): Refusal | null {
    if (!this.controller.signal.aborted) return null;
    const why = String(this.controller.signal.reason);
    if (why === "deadline_exceeded")
      return { code: "deadline_exceeded", message: "the run timed out before it started" };
    if (why === "interrupted") return { code: "interrupted", message: "interrupted before the run started" };
    return { code: "cancelled", message: `cancelled before the run started (${why})` };
  }

  /** The run was accepted: from now on a stop cancels it (the scheduler keeps the deadline itself). */
  running(run: WorkflowRun): void {
    this.run = run;
    if (this.timer !== null) clearTimeout(this.timer);
    this.handle.preparation.signal.removeEventListener("abort", this.onCancel);
    if (this.callerSignal?.aborted) run.cancel("interrupted");
  }

  private stop(reason: string): void {
    if (this.run !== null) {
      if (reason === "interrupted") this.run.cancel("interrupted");
      return;
    }
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
    this.handle.preparation.signal.removeEventListener("abort", this.onCancel);
  }
}
