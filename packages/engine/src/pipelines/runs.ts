import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type {
  Command,
  ControlResult,
  DriveResult,
  FailurePolicy,
  NodeAttempt,
  NodeExecutor,
  PipelineRun,
  PipelineStore,
  RunFilter,
  StoredPipelineEvent,
} from "@icode/pipelines";
import {
  LeaseSchema,
  NodeAttemptSchema,
  PipelineRunSchema,
  RunNodeSchema,
  StoredCommandSchema,
} from "@icode/pipelines";
import { z } from "zod";
import type { EngineContext } from "../context";

/** Where a pipeline run's files live: `<chrysHome>/pipelines/runs/<run_id>/` (attempts, `events.jsonl`). */
export function pipelineRunDir(chrysHome: string, runId: string): string {
  return join(chrysHome, "pipelines", "runs", runId);
}

/** `engine.pipelines.inspect(runId)`: the run, its nodes in definition order, its lease, attempts and commands. */
export const PipelineRunInspectionSchema = z.strictObject({
  run: PipelineRunSchema,
  nodes: z.array(RunNodeSchema),
  /** Who drives the run now (a live or expired lease), or `null` when nobody ever did or it was released. */
  lease: LeaseSchema.nullable(),
  attempts: z.array(NodeAttemptSchema),
  commands: z.array(StoredCommandSchema),
  /** The run's folder on disk. */
  run_dir: z.string(),
});
export type PipelineRunInspection = z.infer<typeof PipelineRunInspectionSchema>;

export interface StartPipelineRun {
  definitionId: string;
  taskInput: string;
  /** Overrides the definition's `failure_policy` for this run. */
  failurePolicy?: FailurePolicy;
}

export interface DriveRunOptions {
  /** Aborting it stops driving: running attempts are interrupted, the lease released, the run resumable. */
  signal?: AbortSignal;
  /** Every event of the run as it is stored, from the first this driver writes. */
  onEvent?: (event: StoredPipelineEvent) => void;
  /** Return at approval gates instead of waiting for the approval (`stop: "waiting_approval"`). */
  stopAtGates?: boolean;
  /**
   * The lease's time to live (default 30 s, renewed every third of it): how long after this process dies
   * another one can take the run over.
   */
  leaseTtlMs?: number;
}

export interface PipelineSubscription {
  /** Stops delivering events; resolves once the last delivery is done. */
  close(): Promise<void>;
}

/** The run half of `engine.pipelines` (see `EnginePipelines`). */
export interface PipelineRunsApi {
  /**
   * Creates a run of a published definition (`pending`, every node `pending`) and its folder; does not drive
   * it. Rejects with `pipeline_definition_draft`, `pipeline_definition_not_found`, `pipeline_task_input_too_long`.
   */
  start(request: StartPipelineRun): Promise<PipelineRun>;
  /**
   * Drives a run in this process until it converges, pauses, or `signal` stops it (`drivePipelineRun` of
   * `@icode/pipelines` with this engine's node executor). `lease_held`: another live process drives it;
   * `stopAtGates`: return `waiting_approval` (lease released) when only approval gates are left.
   */
  drive(runId: string, options?: DriveRunOptions): Promise<DriveResult>;
  /** The runs, newest first. */
  runs(filter?: RunFilter): Promise<PipelineRun[]>;
  inspect(runId: string): Promise<PipelineRunInspection>;
  /**
   * The run's events from `fromSeq` (default 1): those stored, then new ones as any process writes them
   * (the store is read every `pollMs`, default 100 ms), in `seq` order without gaps.
   */
  subscribe(
    runId: string,
    listener: (event: StoredPipelineEvent) => void,
    options?: { fromSeq?: number; pollMs?: number },
  ): Promise<PipelineSubscription>;
  /**
   * Sends a control action through the run's command queue (`controlPipelineRun`): its live driver applies
   * it, or, when none drives the run, this process does. A refusal is a result (`ok: false`), not an error.
   * `needsDriver`: the run is active and undriven: `drive` it to continue.
   */
  control(runId: string, command: Command): Promise<ControlResult>;
  pause(runId: string): Promise<ControlResult>;
  resume(runId: string): Promise<ControlResult>;
  cancel(runId: string): Promise<ControlResult>;
  approve(runId: string, nodeId: string): Promise<ControlResult>;
  retry(runId: string, nodeId: string): Promise<ControlResult>;
  skip(runId: string, nodeId: string, note?: string | null): Promise<ControlResult>;
  stopSessions(runId: string): Promise<ControlResult>;
  /**
   * `icode trajectory export --run`: the run as analysis JSON (`PipelineTrajectorySchema`: the run, its
   * nodes and every attempt with timing and outcome) or as Chrome trace-event JSON for ui.perfetto.dev.
   */
  exportTrajectory(runId: string, format: "json" | "perfetto"): Promise<unknown>;
}

/** Where the runs' node executor comes from (`./agent-executor.ts`), made on first use and closed with the engine. */
export interface ExecutorSource {
  get(): Promise<NodeExecutor>;
  close(): Promise<void>;
}

export function pipelineRuns(
  ctx: EngineContext,
  store: () => Promise<PipelineStore>,
  executor: ExecutorSource,
): PipelineRunsApi {
  const lib = () => import("@icode/pipelines");
  // One owner ID per engine: several drivers in one process are told apart by their run.
  const owner = `engine-${process.pid}-${randomBytes(4).toString("hex")}`;

  const control = async (runId: string, command: Command): Promise<ControlResult> => {
    const pipelines = await lib();
    return pipelines.controlPipelineRun(await store(), runId, command, {
      owner,
      stopSessions: async (id: string) => (await executor.get()).stopSessions(id),
    });
  };

  return {
    async start(request) {
      const opened = await store();
      return opened.createRun({
        definition_id: request.definitionId,
        task_input: request.taskInput,
        ...(request.failurePolicy === undefined ? {} : { failure_policy: request.failurePolicy }),
      });
    },
    async drive(runId, options = {}) {
      const pipelines = await lib();
      const opened = await store();
      await opened.getRun(runId); // pipeline_run_not_found before anything else
      return pipelines.drivePipelineRun({
        store: opened,
        runId,
        executor: await executor.get(),
        owner: `${owner}-${runId.slice(0, 8)}`,
        runDir: pipelineRunDir(ctx.chrysHome, runId),
        launchCwd: ctx.cwd,
        env: ctx.env,
        limits: pipelines.pipelineLimits(ctx.env).limits,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
        ...(options.stopAtGates === undefined ? {} : { stopAtGates: options.stopAtGates }),
        ...(options.leaseTtlMs === undefined ? {} : { leaseTtlMs: options.leaseTtlMs }),
      });
    },
    runs: async (filter) => (await store()).listRuns(filter),
    async inspect(runId) {
      const opened = await store();
      const run = await opened.getRun(runId);
      const [nodes, lease, attempts, commands] = await Promise.all([
        opened.getRunNodes(runId),
        opened.getLease(runId),
        opened.listAttempts(runId),
        opened.listCommands(runId),
      ]);
      return {
        run,
        nodes,
        lease,
        attempts: attempts as NodeAttempt[],
        commands,
        run_dir: pipelineRunDir(ctx.chrysHome, runId),
      };
    },
    async subscribe(runId, listener, options = {}) {
      const opened = await store();
      await opened.getRun(runId);
      let next = options.fromSeq ?? 1;
      let closed = false;
      let timer: NodeJS.Timeout | undefined;
      let reading: Promise<void> = Promise.resolve();
      const read = async () => {
        const events = await opened.listEvents(runId, { fromSeq: next });
        for (const event of events) {
          if (closed) return;
          next = event.seq + 1;
          listener(event);
        }
      };
      const tick = () => {
        reading = read()
          .catch(() => {
            // A store that was closed (the engine closing) ends the subscription quietly.
            closed = true;
          })
          .finally(() => {
            if (!closed) timer = setTimeout(tick, options.pollMs ?? 100);
          });
      };
      await read();
      timer = setTimeout(tick, options.pollMs ?? 100);
      return {
        async close() {
          closed = true;
          if (timer !== undefined) clearTimeout(timer);
          await reading;
        },
      };
    },
    control,
    pause: (runId) => control(runId, { action: "pause" }),
    resume: (runId) => control(runId, { action: "resume" }),
    cancel: (runId) => control(runId, { action: "cancel" }),
    approve: (runId, nodeId) => control(runId, { action: "approve_node", node_id: nodeId }),
    retry: (runId, nodeId) => control(runId, { action: "retry_node", node_id: nodeId }),
    skip: (runId, nodeId, note = null) => control(runId, { action: "skip_node", node_id: nodeId, note }),
    stopSessions: (runId) => control(runId, { action: "stop_sessions" }),
    async exportTrajectory(runId, format) {
      const pipelines = await lib();
      const opened = await store();
      const run = await opened.getRun(runId);
      const trajectory = pipelines.pipelineTrajectory(
        run,
        await opened.getRunNodes(runId),
        await opened.listAttempts(runId),
      );
      return format === "json" ? trajectory : pipelines.pipelinePerfetto(trajectory);
    },
  };
}
