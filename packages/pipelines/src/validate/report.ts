import { createHash } from "node:crypto";
import {
  type Diagnostic,
  diagnostic,
  STAGES,
  type Stage,
  type StageStatus,
  type ValidateReport,
} from "@icode/workflow-errors";
import type { PipelineDefinition } from "../definition";
import type { JsonPath } from "../json-pointer";
import { toPointer } from "../json-pointer";
import type { JsonSource } from "../json-source";

/** At most this many diagnostics are reported (as for Python workflows); the rest set `diagnostics_truncated`. */
const MAX_DIAGNOSTICS = 100;

type Fields = Pick<Diagnostic, "code" | "message"> & Partial<Omit<Diagnostic, "code" | "message" | "stage">>;

/** A diagnostic of a stage not yet recorded, with its offset in the text for ordering. */
export type Found = Omit<Diagnostic, "stage"> & { offset: number };

/**
 * Collects the stages of a pipeline's validation into the version-1 validate report. A stage either
 * passes (its warnings kept) or fails, and every later stage is then `skipped`.
 */
export class PipelineReportBuilder {
  private readonly statuses = new Map<Stage, StageStatus>();
  private readonly diagnostics: Diagnostic[] = [];
  private truncated = false;
  private source: JsonSource | null = null;
  private workflow: ValidateReport["workflow"] = null;
  private digest: string | null = null;

  constructor(
    private readonly path: string,
    readonly file: string | null,
  ) {}

  /** The JSON text, once read: positions and `source_line`s come from it. */
  setSource(source: JsonSource, bytes: Uint8Array | string): void {
    this.source = source;
    this.digest = createHash("sha256").update(bytes).digest("hex");
  }

  /** A diagnostic at `path` of the JSON text (`key`: the property's key rather than its value). */
  at(path: JsonPath, fields: Fields, key = false): Found {
    const found = this.source?.locate(path, key) ?? null;
    if (found === null) return this.make(path, Number.MAX_SAFE_INTEGER, null, fields);
    // A missing field points at the first character of the object that lacks it.
    return this.make(path, found.node.offset, found.exact ? found.node.length : 1, fields);
  }

  /** A diagnostic at an exact range of the text (a template variable inside a string). */
  atRange(path: JsonPath, offset: number, length: number, fields: Fields): Found {
    return this.make(path, offset, length, fields);
  }

  /** The line of the value at `path`, for notes. */
  lineOf(path: JsonPath): number | null {
    const found = this.source?.locate(path) ?? null;
    return found === null ? null : this.position(found.node.offset, found.node.length).line;
  }

  /** A diagnostic of no place in the text (a setting of the environment): no pointer, no line. */
  unplaced(fields: Fields): Found {
    const { stage: _stage, ...made } = diagnostic({ stage: "load", ...fields });
    return { ...made, offset: -1 };
  }

  /** The line and columns of a range, as diagnostic fields. */
  position(offset: number, length: number): Pick<Diagnostic, "line" | "column" | "end_line" | "end_column"> {
    if (this.source === null) return { line: null, column: null, end_line: null, end_column: null };
    const range = this.source.range(offset, length);
    return { line: range.line, column: range.column, end_line: range.endLine, end_column: range.endColumn };
  }

  /** Records a stage's diagnostics (sorted by place); returns `true` when the stage passed. */
  stage(name: Stage, found: ReadonlyArray<Found | Diagnostic>): boolean {
    const place = (d: Found | Diagnostic) => ("offset" in d ? d.offset : Number.MAX_SAFE_INTEGER);
    const sorted = [...found].sort((a, b) => place(a) - place(b));
    for (const d of sorted) {
      const { offset: _offset, ...rest } = d as Found;
      this.add({ ...rest, stage: name });
    }
    const failed = found.some((d) => d.severity === "error");
    this.statuses.set(name, failed ? "fail" : "pass");
    return !failed;
  }

  /** A stage that does not apply to JSON pipelines, or was not asked for. */
  skip(name: Stage): void {
    this.statuses.set(name, "skipped");
  }

  /** A failure of iCode itself during `name`: `internal_error`, never a crash. */
  internal(name: Stage, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.stage(name, [
      diagnostic({
        code: "internal_error",
        stage: name,
        message: `iCode failed during the ${name} stage: ${message}`,
        file: this.file,
        hint: "this is a bug in iCode; please report it with the pipeline that triggers it",
      }),
    ]);
  }

  /** The first stage that has not reported yet. */
  nextStage(): Stage {
    return STAGES.find((name) => !this.statuses.has(name)) ?? "bindings";
  }

  setWorkflow(definition: PipelineDefinition): void {
    const ids = new Set(definition.nodes.map((n) => n.id));
    const used = new Set<string>();
    let edges = 0;
    for (const node of definition.nodes) {
      for (const dep of new Set(node.depends_on)) {
        if (ids.has(dep) && dep !== node.id) {
          edges++;
          used.add(dep);
        }
      }
    }
    this.workflow = {
      title: definition.name,
      node_count: definition.nodes.length,
      edge_count: edges,
      outputs: definition.nodes.filter((n) => !used.has(n.id)).map((n) => n.id),
    };
  }

  finish(): ValidateReport {
    const stages = STAGES.map((name) => ({ name, status: this.statuses.get(name) ?? "skipped" }));
    return {
      version: 1,
      status: stages.some((s) => s.status === "fail") ? "fail" : "pass",
      target: {
        path: this.path,
        layout: "file",
        workflow_id: null,
        entry: this.file,
        package_dir: null,
        source_digest: this.digest,
        files: this.source === null ? null : 1,
      },
      stages,
      diagnostics: this.diagnostics,
      diagnostics_truncated: this.truncated,
      sites_truncated: false,
      workflow: this.workflow,
      output: { text: "", truncated: false },
      environment: null,
    };
  }

  private make(path: JsonPath, offset: number, length: number | null, fields: Fields): Found {
    const position = length === null ? {} : this.position(offset, length);
    const { stage: _stage, ...made } = diagnostic({
      stage: "load",
      ...fields,
      pointer: toPointer(path),
      ...position,
    });
    return { ...made, offset };
  }

  private add(d: Diagnostic): void {
    if (this.diagnostics.length >= MAX_DIAGNOSTICS) {
      this.truncated = true;
      return;
    }
    const file = d.file ?? this.file;
    const sourceLine =
      d.source_line ?? (d.line !== null && this.source !== null ? this.source.lineText(d.line) : null);
    // The field order of the spec's table (and of the Python worker's diagnostics).
    this.diagnostics.push({
      severity: d.severity,
      code: d.code,
      stage: d.stage,
      message: d.message,
      file,
      line: d.line,
      column: d.column,
      end_line: d.end_line,
      end_column: d.end_column,
      node: d.node,
      source_line: sourceLine,
      notes: d.notes,
      hint: d.hint,
      traceback: d.traceback,
      pointer: d.pointer,
    });
  }
}
