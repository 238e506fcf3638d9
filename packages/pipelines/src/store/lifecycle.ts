import type { Diagnostic } from "@icode/workflow-errors";
import { PipelineError } from "../codes";
import type { PipelineDefinition } from "../definition";
import type { PipelineLimits } from "../limits";
import type { PipelineBindings } from "../validate/bindings";
import { parsePipeline } from "../validate/validate";
import type { StoredDefinition } from "./records";

// The lifecycle rules every backend shares: what a draft must pass, what publishing must pass, what can run.

export type Runnable =
  | { ok: true }
  | { ok: false; code: "pipeline_definition_draft"; message: string; hint: string };

/** Whether a stored definition may be run: published ones only. */
export function checkRunnable(stored: Pick<StoredDefinition, "id" | "status">): Runnable {
  if (stored.status === "published") return { ok: true };
  return {
    ok: false,
    code: "pipeline_definition_draft",
    message: `pipeline ${stored.id} is a draft; a draft cannot be run`,
    hint: `publish it first (icode pipeline publish ${stored.id})`,
  };
}

const errorsOf = (diagnostics: readonly Diagnostic[]) => diagnostics.filter((d) => d.severity === "error");

function refuse(what: string, diagnostics: readonly Diagnostic[]): never {
  const errors = errorsOf(diagnostics);
  const first = errors[0];
  throw new PipelineError(
    "pipeline_definition_invalid",
    `${what}: ${errors.length} problem${errors.length === 1 ? "" : "s"}${first === undefined ? "" : `, first: ${first.message}${first.pointer === null ? "" : ` (at ${first.pointer === "" ? "the top" : first.pointer})`}`}`,
    { hint: "validate it (icode pipeline validate) to see every problem", diagnostics },
  );
}

/** JSON text of a definition: 2-space indented, fields in schema order, a final newline. */
export function definitionText(definition: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(definition, null, 2);
  } catch (error) {
    throw new PipelineError(
      "pipeline_definition_invalid",
      `the definition cannot be written as JSON: ${(error as Error).message}`,
    );
  }
  if (text === undefined)
    throw new PipelineError("pipeline_definition_invalid", "the definition is not a JSON value");
  return `${text}\n`;
}

/**
 * What a draft must be: JSON of the definition schema (the `load` stage). `full` also requires the `graph`
 * stage (and `bindings` when given) to pass: a published definition must be runnable.
 */
export function admitDefinition(
  text: string,
  options: {
    limits: PipelineLimits;
    full: boolean;
    what: string;
    file?: string;
    bindings?: PipelineBindings;
  },
): PipelineDefinition {
  const { report, definition } = parsePipeline(text, options.file ?? null, {
    limits: options.limits,
    ...(options.bindings === undefined ? {} : { bindings: options.bindings }),
  });
  if (definition === null) refuse(options.what, report.diagnostics);
  if (options.full && report.status === "fail") refuse(options.what, report.diagnostics);
  return definition;
}
