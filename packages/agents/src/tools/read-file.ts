import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { readTextFile, splitLines } from "./text-file";
import { resolveWorkspacePath } from "./workspace";

/** Lines returned when `limit` is not given, and at most. */
export const READ_FILE_DEFAULT_LINES = 2000;
/** A longer line is cut, with a note. */
export const READ_FILE_MAX_LINE_CHARS = 2000;
/** Characters of one answer at most (about 25k tokens); the rest needs another call with `offset`. */
export const READ_FILE_MAX_OUTPUT_CHARS = 100_000;

const ReadFileInput = z.strictObject({
  path: z.string().describe("File path, relative to the working directory"),
  offset: z.int().min(1).optional().describe("First line to return, 1-based (default 1)"),
  limit: z
    .int()
    .min(1)
    .max(READ_FILE_DEFAULT_LINES)
    .optional()
    .describe(`How many lines to return (default and at most ${READ_FILE_DEFAULT_LINES})`),
});

/**
 * `read_file`: a UTF-8 text file inside the working directory, as numbered lines (`cat -n` style), from
 * `offset` for `limit` lines. Binary files and files over 16 MiB are refused; long lines are cut; an
 * answer that stops early says which `offset` continues it.
 */
export function readFileTool(): AgentTool {
  return defineTool({
    name: "read_file",
    kind: "filesystem.read",
    activityKind: "read",
    description:
      "Read a text file inside the working directory. Returns numbered lines; use offset and limit for " +
      "long files. Binary files are refused.",
    input: ReadFileInput,
    title: (input) => `read_file ${brief(input.path)}`,
    target(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      return { type: "read", path: path.ok ? path.real : input.path };
    },
    async execute(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      if (!path.ok) return toolError(path.error);
      const file = await readTextFile(path.real, path.display);
      if (!file.ok) return toolError(file.error);
      const lines = splitLines(file.text);
      if (lines.length === 0) return { ok: true, output: `${path.display} is empty` };
      const first = input.offset ?? 1;
      if (first > lines.length) {
        return toolError(`${path.display} has ${lines.length} lines; offset ${first} is past its end`);
      }
      const last = Math.min(lines.length, first - 1 + (input.limit ?? READ_FILE_DEFAULT_LINES));
      const out: string[] = [];
      let chars = 0;
      let shownTo = first - 1;
      for (let n = first; n <= last; n++) {
        let line = lines[n - 1] as string;
        if (line.length > READ_FILE_MAX_LINE_CHARS) {
          line = `${line.slice(0, READ_FILE_MAX_LINE_CHARS)}… [line cut at ${READ_FILE_MAX_LINE_CHARS} of ${line.length} characters]`;
        }
        const numbered = `${String(n).padStart(6)}\t${line}`;
        if (out.length > 0 && chars + numbered.length + 1 > READ_FILE_MAX_OUTPUT_CHARS) break;
        out.push(numbered);
        chars += numbered.length + 1;
        shownTo = n;
      }
      if (shownTo < lines.length) {
        out.push(`[lines ${first}-${shownTo} of ${lines.length} shown; read on with offset ${shownTo + 1}]`);
      }
      return { ok: true, output: out.join("\n") };
    },
  });
}
