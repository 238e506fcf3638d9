import { readFile, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { ValidateReport } from "@icode/workflow-errors";
import { diagnostic } from "@icode/workflow-errors";
import type { PipelineDefinition } from "../definition";
import { JsonSource } from "../json-source";
import { type LimitWarning, type PipelineLimits, pipelineLimits } from "../limits";
import { bindingsStage, type PipelineBindings } from "./bindings";
import { graphStage } from "./graph";
import { loadStage } from "./load";
import { PipelineReportBuilder } from "./report";

/** A pipeline file is at most 4 MiB of UTF-8 (as a Python workflow's source). */
export const MAX_PIPELINE_BYTES = 4 * 1024 * 1024;

export type ValidatePipelineOptions = {
  /** The path as the user gave it (`target.path`); defaults to `file`. */
  path?: string;
  /** Resolves profiles and models; without it the `bindings` stage is `skipped`. */
  bindings?: PipelineBindings;
} & (
  | {
      /** The engine's environment, for `ICODE_PIPELINE_MAX_NODES`; never `process.env` implicitly. */
      env?: Readonly<Record<string, string | undefined>>;
      limits?: never;
    }
  | {
      /** Limits already worked out with `pipelineLimits(env)`. */
      limits: PipelineLimits;
      env?: never;
    }
);

export interface ParsedPipeline {
  report: ValidateReport;
  /** The definition (defaults filled in) once the `load` stage passed, even if a later stage failed; else `null`. */
  definition: PipelineDefinition | null;
}

/**
 * Validates a pipeline's JSON text like a compiler, into the `icode workflow validate --json` report: each
 * diagnostic has the JSON pointer of its place and the line and column of that place in `text`. `file` is
 * the absolute path the text came from (`null` for text of no file). Stages, as for Python workflows:
 * `resolve` and `read` are the caller's (the text was given; only its size is checked), `metadata` and
 * `environment` are always `skipped` (no script block, no interpreter), `load` is JSON and the schema,
 * `graph` the structure and templates, `bindings` profiles and models.
 *
 * @example
 * validatePipeline('{"name": "x", "nodes": []}', "/w/x.json").diagnostics[0];
 * // → { code: "pipeline_no_nodes", stage: "load", pointer: "/nodes", line: 1, column: 24, … }
 */
export function validatePipeline(
  text: string,
  file: string | null,
  options: ValidatePipelineOptions = {},
): ValidateReport {
  return parsePipeline(text, file, options).report;
}

/** `validatePipeline`, also returning the definition when it loaded (for import and the run side). */
export function parsePipeline(
  text: string,
  file: string | null,
  options: ValidatePipelineOptions = {},
): ParsedPipeline {
  const report = new PipelineReportBuilder(options.path ?? file ?? "", file);
  report.stage("resolve", []);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_PIPELINE_BYTES) {
    report.stage("read", [tooLarge(file, bytes)]);
    return { report: report.finish(), definition: null };
  }
  report.stage("read", []);
  const { definition } = runStages(report, text, text, options);
  return { report: report.finish(), definition };
}

/**
 * Reads and validates a pipeline file: `resolve` checks that `path` (relative to `cwd`) is a file, `read`
 * that it is readable UTF-8 of at most 4 MiB (a leading byte order mark is dropped); then as
 * `validatePipeline`.
 */
export async function readPipelineFile(
  path: string,
  options: ValidatePipelineOptions & { cwd: string },
): Promise<ParsedPipeline & { text: string | null }> {
  const file = isAbsolute(path) ? path : resolve(options.cwd, path);
  const report = new PipelineReportBuilder(path, file);
  const fail = (stage: "resolve" | "read", code: string, message: string, hint: string) => {
    report.stage(stage, [diagnostic({ code, stage, message, file, hint })]);
    return { report: report.finish(), definition: null, text: null };
  };
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) {
      return fail(
        "resolve",
        "pipeline_not_a_file",
        `${path} is not a file (it is ${info.isDirectory() ? "a folder" : "not a regular file"})`,
        "give the path of a pipeline's .json file",
      );
    }
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      return fail(
        "resolve",
        "pipeline_file_not_found",
        `nothing exists at ${path}`,
        "check the path; icode pipeline list shows the stored pipelines",
      );
    }
    return fail(
      "resolve",
      "pipeline_unreadable",
      `cannot read ${path}: ${(error as Error).message}`,
      "check the file's permissions",
    );
  }
  report.stage("resolve", []);
  if (size > MAX_PIPELINE_BYTES) {
    report.stage("read", [tooLarge(file, size)]);
    return { report: report.finish(), definition: null, text: null };
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    return fail(
      "read",
      "pipeline_unreadable",
      `cannot read ${path}: ${(error as Error).message}`,
      "check the file's permissions",
    );
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return fail("read", "pipeline_not_utf8", `${path} is not UTF-8 text`, "save the file as UTF-8");
  }
  report.stage("read", []);
  const { definition } = runStages(report, text, bytes, options);
  return { report: report.finish(), definition, text };
}

function runStages(
  report: PipelineReportBuilder,
  text: string,
  bytes: Uint8Array | string,
  options: ValidatePipelineOptions,
): { definition: PipelineDefinition | null } {
  report.skip("metadata");
  report.skip("environment");
  let definition: PipelineDefinition | null = null;
  try {
    const source = new JsonSource(text);
    report.setSource(source, bytes);
    let limits: PipelineLimits;
    let warnings: LimitWarning[] = [];
    if (options.limits !== undefined) limits = options.limits;
    else ({ limits, warnings } = pipelineLimits(options.env ?? {}));
    definition = loadStage(report, source, limits, warnings);
    if (definition === null) return { definition };
    report.setWorkflow(definition);
    if (!graphStage(report, source, definition)) return { definition };
    if (options.bindings === undefined) report.skip("bindings");
    else bindingsStage(report, definition, options.bindings);
  } catch (error) {
    report.internal(report.nextStage(), error);
  }
  return { definition };
}

function tooLarge(file: string | null, bytes: number) {
  return diagnostic({
    code: "pipeline_too_large",
    stage: "read",
    file,
    message: `the pipeline is ${bytes} bytes, more than the ${MAX_PIPELINE_BYTES} bytes (4 MiB) a pipeline file may have`,
    hint: "shorten the prompts, or split the pipeline",
  });
}
