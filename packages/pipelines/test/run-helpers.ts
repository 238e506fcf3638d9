import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type DriveOptions,
  type DriveResult,
  drivePipelineRun,
  type FailurePolicy,
  openSqlitePipelineStore,
  type PipelineDefinitionInput,
  type PipelineStore,
  type RunNode,
} from "../src/index";
import type { ScriptedExecutor } from "../src/testing";
import { tempDir } from "./helpers";

/** A node of a test pipeline: `{{task}}` prompts unless given. */
export function node(id: string, depends_on: string[] = [], more: Record<string, unknown> = {}) {
  return {
    id,
    name: id.toUpperCase(),
    prompt_template: `${id}: {{task}} {{upstream_summaries}}`,
    depends_on,
    ...more,
  };
}

export interface RunFixture {
  store: PipelineStore;
  runId: string;
  runDir: string;
  chrysHome: string;
  /** Another store handle on the same database file, as a second process opens it. */
  openStore(): PipelineStore;
  drive(executor: ScriptedExecutor, more?: Partial<DriveOptions>): Promise<DriveResult>;
  states(): Promise<Record<string, RunNode["state"]>>;
  cleanup(): Promise<void>;
}

/** A published definition with one run of it, in a fresh SQLite database file. */
export async function runFixture(
  definition: PipelineDefinitionInput,
  options: { failure_policy?: FailurePolicy; task?: string } = {},
): Promise<RunFixture> {
  const dir = tempDir("icode-pipeline-run-");
  const chrysHome = join(dir, "chrys");
  const opened: PipelineStore[] = [];
  const openStore = () => {
    const store = openSqlitePipelineStore({ chrysHome });
    opened.push(store);
    return store;
  };
  const store = openStore();
  const draft = await store.createDefinition(definition);
  await store.publishDefinition(draft.id);
  const run = await store.createRun({
    definition_id: draft.id,
    task_input: options.task ?? "the task",
    ...(options.failure_policy === undefined ? {} : { failure_policy: options.failure_policy }),
  });
  const runDir = join(dir, "runs", run.run_id);
  return {
    store,
    runId: run.run_id,
    runDir,
    chrysHome,
    openStore,
    drive: (executor, more = {}) =>
      drivePipelineRun({
        store,
        runId: run.run_id,
        executor,
        owner: "driver-1",
        runDir,
        launchCwd: dir,
        pollIntervalMs: 10,
        ...more,
      }),
    states: async () =>
      Object.fromEntries((await store.getRunNodes(run.run_id)).map((n) => [n.node_id, n.state])),
    cleanup: async () => {
      for (const s of opened) await s.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
