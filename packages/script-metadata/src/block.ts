import { type Diagnostic, diagnostic } from "@icode/workflow-errors";
import { splitLines } from "./lines";
import type { ScriptBlock } from "./schema";

/**
 * PEP 723 framing ("Inline script metadata" in the Python packaging specifications), read line by line as
 * its reference regular expression does: a block opens with a line that is exactly `# /// TYPE` (TYPE of ASCII
 * letters, digits and hyphens) at the start of a line, every following line is `#` or starts with `# `, and the
 * block closes at the last line that is exactly `# ///` before the first line that is neither.
 *
 * Where PEP 723 lets tools ignore a mistake, iCode reports it for the `script` block, because ignoring it
 * would silently run the workflow in another interpreter: an unclosed `# /// script` block (PEP 723 says to
 * ignore it), a second `script` block (PEP 723 requires an error), an opening line of any type inside a
 * `script` block or a `script` opening inside another block (PEP 723 allows an error), and an opening line that
 * is almost `# /// script` (such as `#/// script` or `# /// script ` with a trailing space). Blocks of other
 * types are skipped, never read.
 */

const OPENING = /^# \/\/\/ ([a-zA-Z0-9-]+)$/;
const CLOSING = "# ///";
const NEAR_OPENING = /^#[ \t]*\/\/\/[ \t]*script[ \t]*$/;
const NEAR_CLOSING = /^#[ \t]*\/\/\/[ \t]*$/;
const SCRIPT = "script";

export interface ExtractedBlock {
  block: ScriptBlock | null;
  diagnostics: Diagnostic[];
}

/** A `# ` content line, or a bare `#`. */
function isContentLine(line: string): boolean {
  return line === "#" || line.startsWith("# ");
}

/**
 * Finds the `# /// script` block of a Python source. Returns its TOML text and line range, `null` when the file
 * has none, or `metadata_invalid` diagnostics (and no block) when the framing is wrong.
 *
 * @param file the absolute path reported in diagnostics, or `null` when the source has no file.
 */
export function extractScriptBlock(source: string, file: string | null = null): ExtractedBlock {
  return scanScriptBlock(splitLines(source), file);
}

/** `extractScriptBlock` on lines already split by `splitLines`. */
export function scanScriptBlock(lines: readonly string[], file: string | null): ExtractedBlock {
  const diagnostics: Diagnostic[] = [];
  const blocks: Array<{ start: number; end: number }> = [];
  const at = (index: number, column: number | null = 1) => ({
    file,
    line: index + 1,
    column,
    source_line: lines[index] ?? null,
  });

  let index = 0;
  while (index < lines.length) {
    const line = lines[index]!;
    const opening = OPENING.exec(line);
    if (opening === null) {
      if (NEAR_OPENING.test(line)) {
        diagnostics.push(
          diagnostic({
            code: "metadata_invalid",
            stage: "metadata",
            message: `line ${index + 1} looks like the opening of a script metadata block but is not exactly "# /// script", so the block would be ignored`,
            hint: 'write the opening line as exactly "# /// script": "#", one space, "///", one space, "script", nothing after it',
            ...at(index),
          }),
        );
      }
      index++;
      continue;
    }

    const type = opening[1]!;
    // The content run: every following `#`/`# ` line. The block closes at the last `# ///` in the run.
    let runEnd = index + 1;
    let closing = -1;
    while (runEnd < lines.length && isContentLine(lines[runEnd]!)) {
      if (lines[runEnd] === CLOSING) closing = runEnd;
      runEnd++;
    }

    if (closing === -1) {
      if (type === SCRIPT) diagnostics.push(unclosed(lines, index, runEnd, at));
      // PEP 723: an unclosed block of another type is ignored; its lines are scanned as ordinary lines.
      index++;
      continue;
    }

    for (let inner = index + 1; inner < closing; inner++) {
      const nested = OPENING.exec(lines[inner]!);
      if (nested === null || (type !== SCRIPT && nested[1] !== SCRIPT)) continue;
      diagnostics.push(
        diagnostic({
          code: "metadata_invalid",
          stage: "metadata",
          message: `line ${inner + 1} opens a "# /// ${nested[1]}" block inside the "# /// ${type}" block opened at line ${index + 1}, which only closes at line ${closing + 1}`,
          hint:
            type === SCRIPT
              ? `close the script block with a "# ///" line before line ${inner + 1}`
              : `close the "${type}" block with a "# ///" line before line ${inner + 1}`,
          notes: [{ message: `the "# /// ${type}" block opens here`, file, line: index + 1 }],
          ...at(inner),
        }),
      );
    }
    if (type === SCRIPT) blocks.push({ start: index, end: closing });
    index = closing + 1;
  }

  const [first, ...others] = blocks;
  for (const other of others) {
    diagnostics.push(
      diagnostic({
        code: "metadata_invalid",
        stage: "metadata",
        message: `line ${other.start + 1} opens a second "# /// script" block; a file may have only one (the first is at line ${first!.start + 1})`,
        hint: "merge the two blocks into one",
        notes: [{ message: "the first script block opens here", file, line: first!.start + 1 }],
        ...at(other.start),
      }),
    );
  }

  if (diagnostics.length > 0 || first === undefined) return { block: null, diagnostics };
  const content = lines.slice(first.start + 1, first.end).map((line) => (line === "#" ? "" : line.slice(2)));
  return {
    block: {
      start_line: first.start + 1,
      end_line: first.end + 1,
      toml: content.length === 0 ? "" : `${content.join("\n")}\n`,
    },
    diagnostics: [],
  };
}

function unclosed(
  lines: readonly string[],
  start: number,
  stop: number,
  at: (
    index: number,
    column?: number | null,
  ) => { file: string | null; line: number; column: number | null; source_line: string | null },
): Diagnostic {
  const near = lines
    .slice(start + 1, stop + 1)
    .findIndex((line) => line !== CLOSING && NEAR_CLOSING.test(line));
  const nearHint =
    near === -1
      ? null
      : `line ${start + 2 + near} (${JSON.stringify(lines[start + 1 + near])}) is not a closing line: it must be exactly "# ///"`;
  const notes = [{ message: 'the "# /// script" block opens here', file: at(start).file, line: start + 1 }];

  if (stop >= lines.length) {
    return diagnostic({
      code: "metadata_invalid",
      stage: "metadata",
      message: `the "# /// script" block opened at line ${start + 1} is never closed: no "# ///" line follows it`,
      hint: nearHint ?? 'add a line that is exactly "# ///" after the last metadata line',
      ...at(start),
    });
  }
  const line = lines[stop]!;
  const missingSpace = line.startsWith("#") && !line.startsWith("# ");
  return diagnostic({
    code: "metadata_invalid",
    stage: "metadata",
    message: missingSpace
      ? `line ${stop + 1} in the "# /// script" block starts with "#" but not "# ": every line up to the closing "# ///" must be "#" or start with "# "`
      : `line ${stop + 1} in the "# /// script" block opened at line ${start + 1} is not a comment line, and no "# ///" line closes the block before it`,
    hint:
      nearHint ??
      (missingSpace
        ? 'put one space after the "#"'
        : 'close the block with a line that is exactly "# ///" before this line, or prefix this line with "# "'),
    notes,
    ...at(stop),
  });
}
