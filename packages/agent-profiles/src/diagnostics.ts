import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import type { SelectionFailure } from "./match";

/** Where an agent node is declared, as the engine's `bindings` stage knows it. */
export interface NodeSite {
  node: string;
  file?: string | null;
  line?: number | null;
  column?: number | null;
  end_line?: number | null;
  end_column?: number | null;
}

/**
 * A failed profile or model selection as a `bindings`-stage diagnostic of `icode workflow validate`: the
 * selection's code, message and hint, the candidates of an ambiguous selector as notes, placed at the node.
 */
export function selectionDiagnostic(failure: SelectionFailure, site: NodeSite): Diagnostic {
  return diagnostic({
    code: failure.code,
    stage: "bindings",
    message: `agent node '${site.node}': ${failure.message}`,
    hint: failure.hint,
    node: site.node,
    file: site.file ?? null,
    line: site.line ?? null,
    column: site.column ?? null,
    end_line: site.end_line ?? null,
    end_column: site.end_column ?? null,
    notes: failure.candidates.map((c) => ({ message: `candidate: ${c}`, file: null, line: null })),
  });
}
