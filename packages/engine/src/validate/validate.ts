import { resolveTarget } from "@icode/workflow-discovery";
import { type EngineContext, type EngineOptions, engineContext } from "../context";
import { ReportBuilder } from "./pipeline";
import { prepareWorkflow, startDefaultEarly } from "./prepare";
import type { PrestartedValidation } from "./prestart";
import type { ValidateReport } from "./report";

export interface ValidateOptions {
  signal?: AbortSignal;
  /** Overrides the 60-second load-and-build limit (tests). */
  loadTimeoutMs?: number;
  /**
   * The worker `prestartValidation` started with the same engine options, to use instead of starting one.
   * Adopted when it fits (the workflow uses the default interpreter), else ended.
   */
  prestarted?: PrestartedValidation;
}

/**
 * `icode workflow validate <path>`: the stages in order, stopping at the first failure. Runs the workflow's
 * top-level code in a worker that is closed before returning; never runs a node, never records trust.
 */
export async function validateWorkflow(
  path: string,
  ctx: EngineContext,
  options: ValidateOptions = {},
): Promise<ValidateReport> {
  const report = new ReportBuilder(path);
  // Python takes longer to start than the stages before `environment` take to run: start it first. It only
  // loads: validation closes it right after.
  const early = startDefaultEarly(ctx, ctx.cwd, true, options.prestarted);
  let resolved: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    resolved = await resolveTarget(path, {
      cwd: ctx.cwd,
      chrysHome: ctx.chrysHome,
      builtinDir: ctx.builtinDir,
      uid: ctx.uid,
    });
  } catch (error) {
    early.discard();
    report.internal("resolve", error);
    return report.finish();
  }
  if (!report.stage("resolve", resolved.diagnostics) || resolved.target === null) {
    early.discard();
    return report.finish();
  }
  try {
    const prepared = await prepareWorkflow(resolved.target, ctx, report, {
      signal: options.signal,
      workdir: ctx.cwd,
      loadTimeoutMs: options.loadTimeoutMs,
      early,
      loadOnly: true,
    });
    await prepared?.worker.close();
  } catch (error) {
    report.internal(report.nextStage(), error);
  }
  return report.finish();
}

/**
 * `createEngine(engine).validate(path, options)` without an engine: for a process that only validates, such
 * as `icode workflow validate`, since it loads none of the run machinery (scheduler, records, hooks).
 */
export function validateWorkflowFor(
  path: string,
  engine: EngineOptions,
  options: ValidateOptions = {},
): Promise<ValidateReport> {
  return validateWorkflow(path, engineContext(engine), options);
}
