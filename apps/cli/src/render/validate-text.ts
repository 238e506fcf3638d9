import { isAbsolute, relative, sep } from "node:path";
import type { Diagnostic, ValidateReport } from "@icode/workflow-engine";
import { count, oneLine } from "./flatten";
import { shellQuote } from "./shell-quote";

/** Shows an absolute path as `./relative` when it lies under `cwd`, else as it is. */
export function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return file;
  return `.${sep}${rel}`;
}

function location(d: Diagnostic, cwd: string): string {
  if (d.file === null) return "";
  let where = oneLine(displayPath(d.file, cwd));
  if (d.line !== null) {
    where += `:${d.line}`;
    if (d.column !== null) where += `:${d.column}`;
  }
  return `${where}: `;
}

/** The source line with the place marked: `    2 | PROMPT = summarise("diff")` then `      |          ^~~~`. */
function excerpt(d: Diagnostic): string[] {
  if (d.source_line === null || d.line === null) return [];
  const gutter = String(d.line);
  const pad = " ".repeat(gutter.length);
  const text = oneLine(d.source_line.replace(/\t/g, "    "));
  const lines = [`    ${gutter} | ${text}`];
  if (d.column !== null) {
    const endColumn =
      d.end_line === d.line && d.end_column !== null && d.end_column > d.column
        ? d.end_column
        : Math.max(d.column + 1, text.trimEnd().length + 1);
    const width = Math.max(1, endColumn - d.column);
    lines.push(`    ${pad} | ${" ".repeat(d.column - 1)}^${"~".repeat(width - 1)}`);
  }
  return lines;
}

/** The codes of the `resolve` stage whose hints may name a path to check instead, or the workflow list. */
const RESOLVE_CODES = new Set(["path_not_found", "path_is_link", "path_not_workflow", "entry_missing"]);

/**
 * A hint in the CLI's words. Discovery's hints name no command (see the convention in
 * `packages/discovery/src/resolve.ts`): a path to check instead is in backticks, and listing workflows is
 * "the workflow list". Here they become the commands a user can paste, by code.
 */
export function cliHintOf(d: Diagnostic): string | null {
  if (d.hint === null || !RESOLVE_CODES.has(d.code)) return d.hint;
  return d.hint
    .replace(/`([^`]+)`/, (_, path: string) => `\`icode workflow validate ${shellQuote(path)}\``)
    .replace("the workflow list", "`icode workflow list`");
}

export function renderDiagnostic(d: Diagnostic, cwd: string): string[] {
  const lines = [`${location(d, cwd)}${d.severity}: ${oneLine(d.message)} [${d.code}]`, ...excerpt(d)];
  for (const note of d.notes) {
    const at =
      note.file === null
        ? ""
        : ` ${oneLine(displayPath(note.file, cwd))}${note.line === null ? "" : `:${note.line}`}`;
    lines.push(`  note: ${oneLine(note.message)}${at}`);
  }
  const hint = cliHintOf(d);
  if (hint !== null) lines.push(`  help: ${oneLine(hint)}`);
  return lines;
}

function subject(report: ValidateReport): string {
  const { workflow_id, layout, path } = report.target;
  return workflow_id !== null && layout !== null ? `${oneLine(workflow_id)} (${layout})` : oneLine(path);
}

/** The whole text report: diagnostics, captured load output on failure, and one closing PASS/FAIL line. */
export function renderValidateText(report: ValidateReport, cwd: string): string {
  const lines: string[] = [];
  for (const d of report.diagnostics) lines.push(...renderDiagnostic(d, cwd));
  if (report.diagnostics_truncated)
    lines.push("note: more problems were found; the report shows the first ones");
  const errors = report.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = report.diagnostics.length - errors;
  if (report.status === "fail") {
    if (report.output.text !== "") {
      lines.push("captured output (load):");
      const text = report.output.text.endsWith("\n") ? report.output.text.slice(0, -1) : report.output.text;
      for (const line of text.split(/\r?\n/)) lines.push(`  | ${oneLine(line)}`);
      if (report.output.truncated) lines.push("  | … (output truncated)");
    }
    const tail = warnings > 0 ? `, ${count(warnings, "warning")}` : "";
    lines.push(`FAIL ${subject(report)}: ${count(errors, "error")}${tail}`);
  } else {
    const wf = report.workflow;
    const shape = wf === null ? "" : ` · ${count(wf.node_count, "node")} · ${count(wf.edge_count, "edge")}`;
    const tail = warnings > 0 ? ` · ${count(warnings, "warning")}` : "";
    lines.push(`PASS ${subject(report)}${shape}${tail}`);
  }
  return `${lines.join("\n")}\n`;
}
