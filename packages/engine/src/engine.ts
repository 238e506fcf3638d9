import {
  createFsRecordStore,
  type ExportFormat,
  type HookWarning,
  newRunId,
  runHooks,
} from "@icode/workflow-records";
import type {
  Answer,
  CancelReason,
  ControlResult,
  RunInspection,
  SkipOptions,
} from "@icode/workflow-scheduler";
import { type AgentListing, listAgentsFor, listModelsFor, type ModelListing } from "./agents/listings";
import { type EngineOptions, engineContext, type RunContext } from "./context";
import { type RunHistory, runHistory } from "./history";
import { type ListResult, listWorkflows } from "./list";
import { pipelineExecutorOf } from "./pipelines/agent-executor";
import { type EnginePipelines, enginePipelines } from "./pipelines/definitions";
import { previewWorkflow, trustWorkflow, type WorkflowPreview } from "./preview";
import { pythonLoader } from "./python/loader";
import { checkRunRequest, type RunCallbacks, type RunRequest } from "./request";
import { RunRegistry } from "./run/registry";
import { RunController, type RunHandle, type RunStatus, type Subscription } from "./run/run-handle";
import { executeRun } from "./run/run-path";
import { SessionTracker } from "./run/sessions";
import type { ValidateReport } from "./validate/report";
import { type ValidateOptions, validateWorkflow } from "./validate/validate";

export interface Engine {
  /** `icode workflow list`: the workflows the discovery rules find; never runs workflow code. */
  list(): Promise<ListResult>;
  /**
   * `icode agents`: the effective agent profiles (built-in, user, project), sorted by name ignoring case,
   * the default agent marked, and the load problems of their files (file, line, field, message).
   */
  listAgents(): Promise<AgentListing>;
  /**
   * `icode models`: every model profile, sorted by name ignoring case then id, the active one marked, and
   * the load problems of their files. Never carries an API key.
   */
  listModels(): Promise<ModelListing>;
  /** `icode workflow validate`: check a workflow file or folder and return the version-1 report. */
  validate(path: string, options?: ValidateOptions): Promise<ValidateReport>;
  /** What a "Trust workflow" dialog shows. Runs the workflow's top-level code. `null`: no such ID. */
  preview(id: string, options?: { signal?: AbortSignal }): Promise<WorkflowPreview | null>;
  /** Confirms trust in the workflow as it is now; later runs need no `trust: true` until it changes. */
  trust(id: string, options?: { signal?: AbortSignal }): ReturnType<typeof trustWorkflow>;
  /** Starts a run and returns its handle at once: watch, inspect, answer and control it, await `result`. */
  run(request: RunRequest, callbacks?: RunCallbacks): RunHandle;
  /** The runs this engine has started: those still going and the most recent ones that ended. */
  runs(): RunStatus[];
  /** A run this engine started (going or recent), or `undefined`. */
  getRun(runId: string): RunHandle | undefined;
  /** A run's inspection: from its handle when this engine runs it, else from its records. */
  inspect(runId: string): Promise<RunInspection>;
  /** A run's events from `fromSeq`, replayed from its records then live (see `RunHandle.subscribe`). */
  subscribe(
    runId: string,
    listener: Parameters<RunHandle["subscribe"]>[0],
    options?: { fromSeq?: number },
  ): Promise<Subscription>;
  answer(runId: string, askId: string, answers: readonly Answer[]): ControlResult;
  cancel(runId: string, reason?: CancelReason): ControlResult;
  pause(runId: string): ControlResult;
  resume(runId: string): ControlResult;
  retryNode(runId: string, activationId: string): ControlResult;
  skipNode(runId: string, activationId: string, options?: SkipOptions): ControlResult;
  approveNode(runId: string, activationId: string): ControlResult;
  /** Recorded sessions and runs, read from the store (any process's). */
  readonly history: RunHistory;
  /**
   * `icode trajectory export`: a workflow session's runs as analysis JSON (runs, nodes, attempts, timings,
   * usage) or as a Chrome trace-event file for ui.perfetto.dev. Rejects with a `WorkflowError` for an unknown session.
   */
  exportTrajectory(sessionId: string, format: ExportFormat): Promise<unknown>;
  /** JSON pipelines: their definitions and lifecycle, in the pipeline store (opened on first use). */
  readonly pipelines: EnginePipelines;
  /**
   * Ends the engine's sessions (`session_end` hooks) and closes the pipeline store — call once when the app
   * closes normally.
   */
  close(): Promise<{ warnings: HookWarning[] }>;
}

/** The one entry point an embedding app needs. */
export function createEngine(options: EngineOptions): Engine {
  const base = engineContext(options);
  const ctx: RunContext = {
    ...base,
    store: options.store ?? createFsRecordStore({ chrysHome: base.chrysHome }),
    maxConcurrentAgents: options.maxConcurrentAgents,
  };
  const sessions = new SessionTracker();
  const loader = pythonLoader(ctx);
  const registry = new RunRegistry();
  const history = runHistory(ctx.store);
  const pipelines = enginePipelines(base, pipelineExecutorOf(base, options.pipelineExecutor));
  const control =
    <A extends unknown[]>(op: (run: RunHandle, ...args: A) => ControlResult) =>
    (runId: string, ...args: A): ControlResult => {
      const run = registry.get(runId);
      return run === undefined
        ? { ok: false, code: "unknown_run", message: `this engine runs no run ${runId}` }
        : op(run, ...args);
    };
  return {
    list: () => listWorkflows(ctx),
    listAgents: () => listAgentsFor(ctx),
    listModels: () => listModelsFor(ctx),
    validate: (path, validateOptions) => validateWorkflow(path, ctx, validateOptions),
    preview: (id, o) => previewWorkflow(id, ctx, o?.signal),
    trust: (id, o) => trustWorkflow(id, ctx, o?.signal),
    run(request, callbacks = {}) {
      const workflowId = typeof request?.workflowId === "string" ? request.workflowId : "";
      const controller = new RunController(newRunId(), workflowId, ctx.store);
      registry.add(controller);
      const checked = checkRunRequest(request);
      const report = checked.ok
        ? executeRun(controller, checked.request, callbacks, { ctx, loader, sessions })
        : Promise.resolve({
            status: "rejected" as const,
            run_id: controller.runId,
            code: checked.code,
            message: checked.message,
            hint: null,
            session_id: null,
            duration: 0,
            diagnostics: [],
            load_output: null,
          });
      report.then(
        (settled) => {
          controller.settle(settled);
          registry.ended(controller);
        },
        (error: unknown) => {
          registry.ended(controller);
          controller.fail(error);
        },
      );
      return controller;
    },
    runs: () => registry.list(),
    getRun: (runId) => registry.get(runId),
    async inspect(runId) {
      const run = registry.get(runId);
      return run === undefined ? history.inspect(runId) : run.inspect();
    },
    async subscribe(runId, listener, subscribeOptions) {
      const run = registry.get(runId);
      if (run !== undefined) return run.subscribe(listener, subscribeOptions);
      return history.replay(runId, listener, subscribeOptions?.fromSeq ?? 0);
    },
    answer: control((run, askId: string, answers: readonly Answer[]) => run.answer(askId, answers)),
    cancel: control((run, reason?: CancelReason) => run.cancel(reason)),
    pause: control((run) => run.pause()),
    resume: control((run) => run.resume()),
    retryNode: control((run, id: string) => run.retryNode(id)),
    skipNode: control((run, id: string, skip?: SkipOptions) => run.skipNode(id, skip)),
    approveNode: control((run, id: string) => run.approveNode(id)),
    history,
    exportTrajectory: (sessionId, format) => ctx.store.exportTrajectory(sessionId, format as "json"),
    pipelines,
    async close() {
      const warnings: HookWarning[] = [];
      await pipelines.close();
      for (const [sessionId, { workflowId, hookCwd }] of sessions.takeAll()) {
        const ended = await runHooks(
          "session_end",
          { workflow_id: workflowId, session_id: sessionId, cwd: hookCwd },
          { chrysHome: ctx.chrysHome, env: ctx.env },
        );
        warnings.push(...ended.warnings, ...(await ended.background));
      }
      return { warnings };
    },
  };
}
