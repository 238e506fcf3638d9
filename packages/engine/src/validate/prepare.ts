import { dirname, resolve } from "node:path";
import { adoptWorker, type PythonWorker, startWorker } from "@icode/python-bridge";
import {
  checkEnvironment,
  defaultInterpreter,
  launchFor,
  parseScriptMetadata,
  resolvePythonSetting,
  type ScriptMetadata,
} from "@icode/script-metadata";
import { readTarget, type Target } from "@icode/workflow-discovery";
import { type Diagnostic, diagnostic, isWorkflowError } from "@icode/workflow-errors";
import { type Definition, validateDefinition } from "@icode/workflow-graph";
import { type AgentBindings, bindAgents } from "../agents/bindings";
import type { EngineContext } from "../context";
import type { ReportBuilder } from "./pipeline";
import { interpretersCacheDir, type PrestartedValidation } from "./prestart";

/** The load-and-build limit of the spec: 60 seconds. */
export const LOAD_TIMEOUT_MS = 60_000;

/** A workflow that passed every stage: its definition, and the warm worker that loaded it (when kept). */
export interface PreparedPython {
  target: Target;
  sourceDigest: string;
  files: { relPath: string; absPath: string; size: number; sha256: string }[];
  metadata: ScriptMetadata | null;
  /** The interpreter asked for: `[tool.chrys] python` as written, `null` for the default. */
  declaredPython: string | null;
  /** The interpreter started, as selected (a venv's `bin/python` stays itself, links not followed). */
  interpreterCommand: string;
  interpreterKind: "default" | "user";
  worker: PythonWorker;
  hello: PythonWorker["hello"];
  definition: Definition;
  /** Its agent nodes bound to this computer's profiles and models; `null` without agent nodes. */
  agents: AgentBindings | null;
}

/** What is known once the interpreter started and before any workflow code runs (a trust gate needs it). */
export interface BeforeLoad {
  target: Target;
  sourceDigest: string;
  metadata: ScriptMetadata | null;
  interpreterKind: "default" | "user";
  interpreterCommand: string;
  declaredPython: string | null;
  hello: PythonWorker["hello"];
}

export interface PrepareOptions {
  signal?: AbortSignal;
  /**
   * Called after the `environment` stage, before the workflow's code is loaded: return `false` to stop
   * (nothing of the workflow has run then; the worker is closed and `prepareWorkflow` returns `null`).
   */
  beforeLoad?: (info: BeforeLoad) => Promise<boolean>;
  /** The workspace the worker runs in (relative paths in nodes resolve against it). */
  workdir: string;
  loadTimeoutMs?: number;
  /** The default interpreter, started by the caller (`startDefaultEarly`); else it is started here. */
  early?: EarlyWorker;
  /** The worker will only load and be closed (validation; see `StartWorkerOptions.loadOnly`). */
  loadOnly?: boolean;
  /** The workflow's default model for the `bindings` stage (a session's saved choice), or `null`. */
  workflowDefaultModel?: string | null;
}

/**
 * Runs the stages after `resolve` for one target, in order, stopping at the first failure: `read`,
 * `metadata`, `environment`, `load`, `graph`, `bindings`. Everything found goes into `report`. On success the
 * worker stays open for the caller (a run reuses it); on failure it is closed.
 */
export async function prepareWorkflow(
  target: Target,
  ctx: EngineContext,
  report: ReportBuilder,
  options: PrepareOptions,
): Promise<PreparedPython | null> {
  const t = report.report.target;
  t.layout = target.layout;
  t.workflow_id = target.workflowId;
  t.entry = target.entry;
  t.package_dir = target.packageDir;

  // Most workflows run with the default interpreter: start it now, while the files are read and checked
  // (starting it runs no workflow code), and use it if the workflow's metadata agrees.
  const early = options.early ?? startDefaultEarly(ctx, options.workdir, options.loadOnly);
  let before: BeforeEnvironment | null;
  try {
    before = await stagesBeforeEnvironment(target, ctx, report);
  } catch (error) {
    early.discard();
    throw error;
  }
  if (before === null) return early.discard();
  const { read, meta, chosen } = before;
  let worker: PythonWorker;
  try {
    worker =
      (await early.take(chosen.interpreter.command)) ??
      (await startInterpreter(chosen.interpreter.command, ctx, options.workdir, options.loadOnly));
  } catch (error) {
    report.stage("environment", [environmentFailure(chosen.interpreter.command, error, target.entry)]);
    return null;
  }
  const abort = () => void worker.close();
  options.signal?.addEventListener("abort", abort, { once: true });
  try {
    const py = worker.hello.python;
    report.report.environment = {
      kind: chosen.interpreter.kind,
      executable: py.executable,
      version: py.version,
      implementation: py.implementation,
      platform: py.platform,
      machine: py.machine,
    };
    if (
      !report.stage(
        "environment",
        checkEnvironment(meta.metadata, py, {
          sites: meta.sites,
          origin: chosen.interpreter.origin,
          file: target.entry,
        }),
      )
    ) {
      await worker.close();
      return null;
    }

    if (options.beforeLoad !== undefined) {
      const go = await options.beforeLoad({
        target,
        sourceDigest: read.sourceDigest!,
        metadata: meta.metadata,
        interpreterKind: chosen.interpreter.kind,
        interpreterCommand: chosen.interpreter.command,
        declaredPython: chosen.interpreter.declared,
        hello: worker.hello,
      });
      if (!go) {
        await worker.close();
        return null;
      }
    }

    // load
    const loaded = await worker.load(
      { entry: target.entry, packageDir: target.packageDir },
      { timeoutMs: options.loadTimeoutMs ?? LOAD_TIMEOUT_MS },
    );
    report.report.output = { text: loaded.output.text, truncated: loaded.output.truncated };
    if (!loaded.ok) {
      if (loaded.diagnostics_truncated) report.report.diagnostics_truncated = true;
      report.stage("load", loaded.diagnostics);
      await worker.close();
      return null;
    }
    report.stage("load", []);

    // graph
    const graph = validateDefinition(loaded.definition);
    const definition = graph.definition;
    if (definition !== null) {
      report.report.sites_truncated = definition.sites_truncated;
      report.report.workflow = {
        title: definition.title,
        node_count: definition.nodes.length,
        edge_count: definition.edges.length,
        outputs: [...definition.outputs],
      };
    }
    if (!report.stage("graph", graph.diagnostics) || definition === null) {
      await worker.close();
      return null;
    }

    // bindings
    const agents = await bindAgents(definition, {
      chrysHome: ctx.chrysHome,
      cwd: options.workdir,
      env: ctx.env,
      homeDir: ctx.homeDir,
      workflowDefault: options.workflowDefaultModel ?? null,
    });
    if (!report.stage("bindings", agents?.diagnostics ?? [])) {
      await worker.close();
      return null;
    }
    return {
      target,
      sourceDigest: read.sourceDigest!,
      files: read.files,
      metadata: meta.metadata,
      declaredPython: chosen.interpreter.declared,
      interpreterCommand: chosen.interpreter.command,
      interpreterKind: chosen.interpreter.kind,
      worker,
      hello: worker.hello,
      definition,
      agents,
    };
  } catch (error) {
    await worker.close();
    if (options.signal?.aborted) return null;
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", abort);
  }
}

interface BeforeEnvironment {
  read: Awaited<ReturnType<typeof readTarget>>;
  meta: ReturnType<typeof parseScriptMetadata>;
  chosen: Extract<ReturnType<typeof defaultInterpreter>, { ok: true }>;
}

/** The stages `read` and `metadata`, and the choice of interpreter; `null` when one of them failed. */
async function stagesBeforeEnvironment(
  target: Target,
  ctx: EngineContext,
  report: ReportBuilder,
): Promise<BeforeEnvironment | null> {
  const t = report.report.target;

  // read
  const read = await readTarget(target, { uid: ctx.uid });
  t.source_digest = read.sourceDigest ?? null;
  t.files = read.files.length > 0 ? read.files.length : null;
  if (!report.stage("read", read.diagnostics) || read.entrySource === null) return null;

  // metadata
  const meta = parseScriptMetadata(read.entrySource, target.entry);
  if (!report.stage("metadata", meta.diagnostics)) return null;

  // environment: pick the interpreter (the caller starts it; the worker's hello tells its version)
  const baseDir = target.packageDir ?? dirname(target.entry);
  const chosen =
    meta.metadata?.python != null
      ? resolvePythonSetting({
          python: meta.metadata.python,
          baseDir,
          env: ctx.env,
          sites: meta.sites,
          file: target.entry,
        })
      : defaultInterpreter({ env: ctx.env, file: target.entry });
  if (!chosen.ok) {
    report.stage("environment", chosen.diagnostics);
    return null;
  }
  return { read, meta, chosen };
}

/**
 * Starts the worker for the interpreter a workflow selected. That interpreter stays what reports and trust
 * name; only a pyenv shim is started through the binary it would run (`launchFor` of @icode/script-metadata).
 */
async function startInterpreter(
  command: string,
  ctx: EngineContext,
  workdir: string,
  loadOnly = false,
): Promise<PythonWorker> {
  const launch = await launchFor(command, {
    env: ctx.env,
    cwd: workdir,
    cacheDir: interpretersCacheDir(ctx.chrysHome),
  });
  return startWorker({
    python: launch.command,
    cwd: workdir,
    cacheDir: ctx.pycacheDir,
    env: launch.env,
    loadOnly,
    onWarning: ctx.onWarning,
  });
}

/** A worker started before it is known to be wanted: `take` it for the interpreter chosen, or `discard` it. */
export interface EarlyWorker {
  /** The worker when it was started for `command` (rejecting as that start failed), else `null`. */
  take(command: string): Promise<PythonWorker | null>;
  /** Closes the worker once started; returns `null` for the caller to return. */
  discard(): null;
}

/**
 * Starts the default interpreter's worker, if there is a default interpreter; or adopts `prestarted`, the
 * same worker started before the engine was loaded, when it was started as this call would start it.
 */
export function startDefaultEarly(
  ctx: EngineContext,
  workdir: string,
  loadOnly = false,
  prestarted?: PrestartedValidation,
): EarlyWorker {
  const chosen = defaultInterpreter({ env: ctx.env });
  if (!chosen.ok) {
    prestarted?.process.discard();
    return { take: async () => null, discard: () => null };
  }
  const command = chosen.interpreter.command;
  const options = prestarted?.process.options;
  const fits =
    prestarted?.interpreter === command &&
    options?.cwd === resolve(workdir) &&
    options.cacheDir === resolve(ctx.pycacheDir) &&
    options.loadOnly === loadOnly;
  if (!fits) prestarted?.process.discard();
  const started =
    fits && prestarted
      ? adoptWorker(prestarted.process, undefined, { onWarning: ctx.onWarning })
      : startInterpreter(command, ctx, workdir, loadOnly);
  started.catch(() => undefined); // a failed start is reported if the worker is taken
  const discard = (): null => {
    void started.then((worker) => worker.close()).catch(() => undefined);
    return null;
  };
  return {
    take: async (taken) => (taken === command ? started : discard()),
    discard,
  };
}

function environmentFailure(command: string, error: unknown, entry: string): Diagnostic {
  const detail = error instanceof Error ? error.message : String(error);
  return diagnostic({
    code: "environment_invalid",
    stage: "environment",
    message: `the Python interpreter ${command} could not be started: ${detail}`,
    file: entry,
    hint:
      isWorkflowError(error) && error.hint !== undefined
        ? error.hint
        : "check that the interpreter runs (`<python> -c pass`), is Python 3.9 or later, and is not a wrapper that passes -E or -I",
  });
}
