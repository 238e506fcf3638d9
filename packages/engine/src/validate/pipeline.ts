import { readFileSync } from "node:fs";
import { type Diagnostic, diagnostic, STAGES, type Stage } from "@icode/workflow-errors";
import type { StageStatus, ValidateReport } from "./report";

/** At most this many diagnostics are reported; the rest are counted as `diagnostics_truncated`. */
const MAX_DIAGNOSTICS = 100;

/**
 * Collects what the stages find into the version-1 report. A stage either passes (its warnings kept), or
 * fails and every later stage is `skipped`.
 */
export class ReportBuilder {
  readonly report: ValidateReport;
  private readonly statuses = new Map<Stage, StageStatus>();
  private readonly sourceCache = new Map<string, string[] | null>();

  constructor(path: string) {
    this.report = {
      version: 1,
      status: "pass",
      target: {
        path,
        layout: null,
        workflow_id: null,
        entry: null,
        package_dir: null,
        source_digest: null,
        files: null,
      },
      stages: [],
      diagnostics: [],
      diagnostics_truncated: false,
      sites_truncated: false,
      workflow: null,
      output: { text: "", truncated: false },
      environment: null,
    };
  }

  /** Records a stage's diagnostics; returns `true` when the stage passed (no errors). */
  stage(name: Stage, diagnostics: readonly Diagnostic[]): boolean {
    for (const d of diagnostics) this.add(d);
    const failed = diagnostics.some((d) => d.severity === "error");
    this.statuses.set(name, failed ? "fail" : "pass");
    if (failed) this.report.status = "fail";
    return !failed;
  }

  /** A failure of iCode itself during `name`: `internal_error`, never a crash. */
  internal(name: Stage, error: unknown): false {
    const message = error instanceof Error ? error.message : String(error);
    return this.stage(name, [
      diagnostic({
        code: "internal_error",
        stage: name,
        message: `iCode failed during the ${name} stage: ${message}`,
        hint: "this is a bug in iCode; please report it with the workflow that triggers it",
      }),
    ]) as false;
  }

  private add(d: Diagnostic): void {
    if (this.report.diagnostics.length >= MAX_DIAGNOSTICS) {
      this.report.diagnostics_truncated = true;
      return;
    }
    this.report.diagnostics.push(
      d.source_line === null && d.file !== null && d.line !== null
        ? { ...d, source_line: this.sourceLine(d.file, d.line) }
        : d,
    );
  }

  private sourceLine(file: string, line: number): string | null {
    let lines = this.sourceCache.get(file);
    if (lines === undefined) {
      try {
        lines = readFileSync(file, "utf8").split(/\r\n|\r|\n/);
      } catch {
        lines = null;
      }
      this.sourceCache.set(file, lines);
    }
    return lines?.[line - 1] ?? null;
  }

  /** The first stage that has not reported yet: where an internal failure happened. */
  nextStage(): Stage {
    return STAGES.find((name) => !this.statuses.has(name)) ?? "bindings";
  }

  finish(): ValidateReport {
    this.report.stages = STAGES.map((name) => ({ name, status: this.statuses.get(name) ?? "skipped" }));
    return this.report;
  }
}
