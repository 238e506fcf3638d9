import { resolveTarget } from "@icode/workflow-discovery";
import type { EngineContext } from "../context";
import { ReportBuilder } from "./pipeline";
import { prepareWorkflow } from "./prepare";
import type { ValidateReport } from "./report";

export interface ValidateOptions {
  signal?: AbortSignal;
  /** Overrides the 60-second load-and-build limit (tests). */
  loadTimeoutMs?: number;
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
  let resolved: Awaited<ReturnType<typeof resolveTarget>>;
  try {
    resolved = await resolveTarget(path, {
      cwd: ctx.cwd,
      chrysHome: ctx.chrysHome,
      builtinDir: ctx.builtinDir,
      uid: ctx.uid,
    });
  } catch (error) {
    report.internal("resolve", error);
    return report.finish();
  }
  if (!report.stage("resolve", resolved.diagnostics) || resolved.target === null) return report.finish();
  try {
    const prepared = await prepareWorkflow(resolved.target, ctx, report, {
      signal: options.signal,
      workdir: ctx.cwd,
      loadTimeoutMs: options.loadTimeoutMs,
    });
    await prepared?.worker.close();
  } catch (error) {
    report.internal(report.nextStage(), error);
  }
  return report.finish();
}
