import type { ConfigProblem } from "./problems";

/** The problems of one load, and the line of each field of each file read, for problems found later. */
export class Report {
  readonly problems: ConfigProblem[] = [];
  private readonly lines = new Map<string, (field: string) => number | null>();

  lineIndex(file: string, lineOf: ((field: string) => number | null) | undefined): void {
    if (lineOf !== undefined) this.lines.set(file, lineOf);
  }

  add(
    file: string | null,
    code: ConfigProblem["code"],
    severity: "error" | "warning",
    message: string,
    field: string | null = null,
  ): void {
    const line = file === null || field === null ? null : (this.lines.get(file)?.(field) ?? null);
    this.problems.push({ code, severity, file, line, field, message });
  }
}

/** Orders the problems of one file by line, file-level ones first. */
export function byLine(a: ConfigProblem, b: ConfigProblem): number {
  return (a.line ?? 0) - (b.line ?? 0);
}
