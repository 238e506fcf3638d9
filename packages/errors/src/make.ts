import type { Diagnostic } from "./diagnostic";

// No zod at run time here (types only): code that only builds diagnostics, such as discovery for
// `icode workflow list`, then never loads or builds the schemas.

/** Builds a diagnostic with every optional field `null`, so callers name only what they know. */
export function diagnostic(
  fields: Pick<Diagnostic, "code" | "stage" | "message"> &
    Partial<Omit<Diagnostic, "code" | "stage" | "message">>,
): Diagnostic {
  return {
    severity: "error",
    file: null,
    line: null,
    column: null,
    end_line: null,
    end_column: null,
    node: null,
    source_line: null,
    notes: [],
    hint: null,
    traceback: null,
    pointer: null,
    ...fields,
  };
}
