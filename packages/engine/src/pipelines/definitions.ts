import { isAbsolute, resolve } from "node:path";
import type {
  DefinitionFilter,
  ExpectedRevision,
  PipelineBindings,
  PipelineStore,
  StoredDefinition,
} from "@icode/pipelines";
import { type EngineContext, type EngineOptions, engineContext } from "../context";
import type { ValidateReport } from "../validate/report";
import { type ExecutorSource, type PipelineRunsApi, pipelineRuns } from "./runs";

/**
 * `engine.pipelines`: the JSON pipeline definitions of this computer, in the pipeline store under the
 * configuration directory (`<chrysHome>/pipelines.db`), and their lifecycle (import → draft → publish →
 * revisions; built-ins locked). Composes `@icode/pipelines` (the store, validation, built-ins) with the
 * agent profiles of `@icode/agent-profiles` (the `bindings` stage); loads no model or protocol SDK. The store
 * is opened on first use, with the built-in pipelines installed or brought in step, and closed by `close()`.
 * Runs (`start`, `drive`, `runs`, `inspect`, `subscribe`, the control actions) compose the run driver of
 * `@icode/pipelines` with the engine's `pipelineExecutor`.
 */
export interface EnginePipelines extends PipelineRunsApi {
  /** The stored definitions, by ID (built-ins `builtin/<name>`, locked and published). */
  listDefinitions(filter?: DefinitionFilter): Promise<StoredDefinition[]>;
  /** One definition; rejects with `pipeline_definition_not_found`. */
  getDefinition(id: string): Promise<StoredDefinition>;
  /**
   * `icode pipeline validate`: the version-1 report of `workflow validate`, with JSON pointers and
   * line:column, through every stage including `bindings` (profiles and models resolve on this computer).
   * `file` is read relative to the engine's `cwd`; `text` is checked as given (`file` then names it).
   */
  validate(source: PipelineSource): Promise<ValidateReport>;
  /** A user draft from a file or a JSON text (`pipeline_definition_invalid` with the diagnostics if it does not load). */
  import(source: PipelineSource, options?: { id?: string }): Promise<StoredDefinition>;
  /** The definition as JSON text (2-space indented, defaults filled in), importable again. */
  export(id: string): Promise<string>;
  /** Makes a draft runnable once it passes every stage, `bindings` included. */
  publish(id: string, options?: ExpectedRevision): Promise<StoredDefinition>;
  /** An editable user draft with the same content: how a locked definition is changed. */
  copy(id: string, options?: { id?: string; name?: string }): Promise<StoredDefinition>;
  delete(id: string, options?: ExpectedRevision): Promise<void>;
  /** The store itself, opened (and the built-ins installed) on first use: what the run side composes. */
  store(): Promise<PipelineStore>;
  /**
   * Closes the store if it was opened, and the agent node executor if the engine made one (their sessions
   * end); the namespace opens them again when used after.
   */
  close(): Promise<void>;
}

/** A pipeline to validate or import: a file (relative to the engine's `cwd`), or JSON text. */
export type PipelineSource = { file: string; text?: never } | { text: string; file?: string };

export function enginePipelines(ctx: EngineContext, nodes: ExecutorSource): EnginePipelines {
  // Loaded when first used, so that listing and running Python workflows never load SQLite.
  const lib = () => import("@icode/pipelines");
  let opening: Promise<PipelineStore> | null = null;

  const store = (): Promise<PipelineStore> => {
    opening ??= (async () => {
      const pipelines = await lib();
      const opened = pipelines.openSqlitePipelineStore({
        chrysHome: ctx.chrysHome,
        limits: pipelines.pipelineLimits(ctx.env).limits,
      });
      try {
        await pipelines.installBuiltinPipelines(opened);
      } catch (error) {
        await opened.close();
        throw error;
      }
      return opened;
    })();
    // A failed open is not kept: the next use tries again.
    opening.catch(() => {
      opening = null;
    });
    return opening;
  };

  const bindings = async (): Promise<PipelineBindings> => {
    const profiles = await import("@icode/agent-profiles");
    const config = await profiles.loadAgentConfig({
      chrysHome: ctx.chrysHome,
      cwd: ctx.cwd,
      env: ctx.env,
      homeDir: ctx.homeDir,
    });
    return {
      resolveProfile: (id) => profiles.matchProfile(config, id),
      resolveModel: (selector) => profiles.matchModel(config, selector),
    };
  };

  /** The text of a source and the absolute file it came from, or the failed report of reading it. */
  const read = async (
    source: PipelineSource,
  ): Promise<{ text: string; file: string | null; report: null } | { report: ValidateReport }> => {
    const pipelines = await lib();
    if (source.text !== undefined) {
      return {
        text: source.text,
        file: source.file === undefined ? null : resolvePath(ctx.cwd, source.file),
        report: null,
      };
    }
    const parsed = await pipelines.readPipelineFile(source.file, { cwd: ctx.cwd, env: ctx.env });
    if (parsed.text === null) return { report: parsed.report };
    return { text: parsed.text, file: resolvePath(ctx.cwd, source.file), report: null };
  };

  return {
    ...pipelineRuns(ctx, store, nodes),
    listDefinitions: async (filter) => (await store()).listDefinitions(filter),
    getDefinition: async (id) => (await store()).getDefinition(id),
    async validate(source) {
      const pipelines = await lib();
      const resolved = await bindings();
      if (source.text === undefined) {
        return (
          await pipelines.readPipelineFile(source.file, { cwd: ctx.cwd, env: ctx.env, bindings: resolved })
        ).report;
      }
      const file = source.file === undefined ? null : resolvePath(ctx.cwd, source.file);
      return pipelines.validatePipeline(source.text, file, {
        env: ctx.env,
        bindings: resolved,
        ...(source.file === undefined ? {} : { path: source.file }),
      });
    },
    async import(source, options = {}) {
      const got = await read(source);
      if (got.report !== null) {
        const pipelines = await lib();
        const first = got.report.diagnostics.find((d) => d.severity === "error");
        throw new pipelines.PipelineError(
          "pipeline_definition_invalid",
          `cannot import ${source.file ?? "the text"}: ${first?.message ?? "it cannot be read"}`,
          { hint: first?.hint ?? "check the path", diagnostics: got.report.diagnostics },
        );
      }
      return (await store()).importDefinition(got.text, {
        ...(options.id === undefined ? {} : { id: options.id }),
        ...(got.file === null ? {} : { file: got.file }),
      });
    },
    export: async (id) => (await store()).exportDefinition(id),
    async publish(id, options = {}) {
      const opened = await store();
      return opened.publishDefinition(id, { ...options, bindings: await bindings() });
    },
    copy: async (id, options) => (await store()).copyDefinition(id, options),
    delete: async (id, options) => (await store()).deleteDefinition(id, options),
    store,
    async close() {
      await nodes.close();
      const pending = opening;
      opening = null;
      if (pending === null) return;
      let opened: PipelineStore;
      try {
        opened = await pending;
      } catch {
        return; // it never opened: nothing to close
      }
      await opened.close();
    },
  };
}

/**
 * What `icode pipeline list|show|validate|…|runs|inspect` need: the definitions, and reading runs (no
 * driving, no control actions), without the agent runtimes, the Python bridge or the scheduler.
 */
export type PipelineCatalog = Omit<
  EnginePipelines,
  "drive" | "control" | "pause" | "resume" | "cancel" | "approve" | "retry" | "skip" | "stopSessions"
>;

/** `pipelinesFor` without the node executor: reads and manages, never runs a node. */
export function pipelineCatalogFor(options: EngineOptions): PipelineCatalog {
  return enginePipelines(engineContext(options), {
    // Unreachable through `PipelineCatalog`'s type: none of its methods drives or controls a run.
    get: () => Promise.reject(new Error("a pipeline catalog runs no node")),
    close: async () => {},
  });
}

function resolvePath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}
