import { oneLine } from "./flatten";
import { displayPath } from "./validate-text";

const FRAME = /^ {2}File "(.+)", line (\d+), in (.+)$/;

/**
 * The frames of a node's Python traceback (the engine keeps only the author's own files), as text lines:
 * `  at ./steps.py:12 in review`, each followed by its source line, outermost first as Python prints them.
 * Lines that are not frames (the exception, chaining notes, `^^^` markers) are left out: the error message
 * is shown apart.
 */
export function tracebackLines(traceback: string | null, cwd: string): string[] {
  if (traceback === null) return [];
  const lines = traceback.split(/\r?\n/);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const frame = FRAME.exec(lines[i]!);
    if (frame === null) continue;
    const [, file, line, fn] = frame;
    const where = file!.startsWith("<") ? file! : displayPath(file!, cwd);
    out.push(`  at ${oneLine(where)}:${line} in ${oneLine(fn!)}`);
    const source = lines[i + 1];
    if (source?.startsWith("    ") && !FRAME.test(source)) {
      out.push(`    ${line} | ${oneLine(source.trim())}`);
    }
  }
  return out;
}
