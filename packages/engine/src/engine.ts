import {
  type ExportFormat,
  exportTrajectory,
  loadSession,
  runHooks,
  sessionDir,
} from "@icode/workflow-records";
import { type EngineOptions, engineContext } from "./context";
import { type ListResult, listWorkflows } from "./list";
import { previewWorkflow, trustWorkflow, type WorkflowPreview } from "./preview";
import { type ActiveRun, type RunRequest, runWorkflow } from "./run/run-workflow";
import { SessionTracker } from "./run/sessions";
import type { ValidateReport } from "./validate/report";
import { type ValidateOptions, validateWorkflow } from "./validate/validate";

export interface Engine {
  /** `icode workflow list`: the workflows the discovery rules find; never runs workflow code. */
  list(): Promise<ListResult>;
  /** `icode workflow validate`: check a workflow file or folder and return the version-1 report. */
  validate(path: string, options?: ValidateOptions): Promise<ValidateReport>;
  /** What a "Trust workflow" dialog shows. Runs the workflow's top-level code. `null`: no such ID. */
  preview(id: string, options?: { signal?: AbortSignal }): Promise<WorkflowPreview | null>;
  /** Confirms trust in the workflow as it is now; later runs need no `trust: true` until it changes. */
  trust(id: string, options?: { signal?: AbortSignal }): ReturnType<typeof trustWorkflow>;
  /** Starts a run: watch `events`, await `result`, and control it (cancel, retry a node awaiting retry…). */
  run(request: RunRequest): ActiveRun;
  /**
   * `icode trajectory export`: a workflow session's runs as analysis JSON (runs, nodes, attempts, timings,
   * usage) or as a Chrome trace-event file for ui.perfetto.dev. Throws a `WorkflowError` for an unknown session.
   */
  exportTrajectory(sessionId: string, format: ExportFormat): unknown;
  /** Ends the engine's sessions (`session_end` hooks) — call once when the app closes normally. */
  close(): Promise<void>;
}

/** The one entry point an embedding app needs. */
export function createEngine(options: EngineOptions): Engine {
  const ctx = engineContext(options);
  const tracker = new SessionTracker();
  return {
    list: () => listWorkflows(ctx),
    validate: (path, validateOptions) => validateWorkflow(path, ctx, validateOptions),
    preview: (id, o) => previewWorkflow(id, ctx, o?.signal),
    trust: (id, o) => trustWorkflow(id, ctx, o?.signal),
    run: (request) => runWorkflow(request, ctx, tracker),
    exportTrajectory(sessionId, format) {
      loadSession(ctx.chrysHome, sessionId);
      return exportTrajectory(sessionDir(ctx.chrysHome, sessionId), format);
    },
    async close() {
      for (const [sessionId, { workflowId, hookCwd }] of tracker.takeAll()) {
        await runHooks(
          "session_end",
          { workflow_id: workflowId, session_id: sessionId, cwd: hookCwd },
          { chrysHome: ctx.chrysHome, env: ctx.env },
        );
      }
    },
  };
}
