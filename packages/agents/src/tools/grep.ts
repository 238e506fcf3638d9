import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { below } from "./glob";
import { globFilter } from "./glob-pattern";
import { looksBinary, splitLines, TEXT_FILE_MAX_BYTES } from "./text-file";
import { walkFiles } from "./walk";
import { resolveWorkspacePath } from "./workspace";

export const GREP_DEFAULT_RESULTS = 200;
export const GREP_MAX_RESULTS = 1000;
/** A matching line is shown up to this many characters. */
export const GREP_MAX_LINE_CHARS = 300;

const GrepInput = z.strictObject({
  pattern: z.string().min(1).describe("JavaScript regular expression searched in each line"),
  path: z
    .string()
    .optional()
    .describe("File or folder to search, relative to the working directory (default .)"),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Only files matching this glob: a name pattern (*.ts) at any depth, or a path pattern (src/**/*.ts)",
    ),
  case_insensitive: z.boolean().optional().describe("Ignore case (default false)"),
  max_results: z
    .int()
    .min(1)
    .max(GREP_MAX_RESULTS)
    .optional()
    .describe(`Matching lines to return (default ${GREP_DEFAULT_RESULTS}, at most ${GREP_MAX_RESULTS})`),
});

/** A regular expression from the model: Unicode mode when it parses so, else the legacy syntax. */
export function compileRegExp(pattern: string, ignoreCase: boolean): RegExp | string {
  const flags = ignoreCase ? "i" : "";
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      return (error as Error).message;
    }
  }
}

/**
 * `grep`: lines matching a regular expression in the text files below a path of the working directory, as
 * `path:line: text`, in path order. Skips `.git` folders, binary files and files over 16 MiB (and says how
 * many were skipped); stops at `max_results` matching lines and says there are more.
 */
export function grepTool(): AgentTool {
  return defineTool({
    name: "grep",
    kind: "search",
    activityKind: "search",
    description:
      "Search file contents inside the working directory with a regular expression. Returns path:line: text " +
      "for each matching line; narrow it with path and glob.",
    input: GrepInput,
    title: (input) =>
      `grep ${brief(input.pattern, 60)}${input.path === undefined ? "" : ` in ${brief(input.path)}`}`,
    target(input, context) {
      const base = resolveWorkspacePath(context.cwd, input.path ?? ".");
      return { type: "read", path: base.ok ? base.real : (input.path ?? ".") };
    },
    async execute(input, context) {
      const re = compileRegExp(input.pattern, input.case_insensitive === true);
      if (typeof re === "string") return toolError(`the pattern is not a valid regular expression: ${re}`);
      const base = resolveWorkspacePath(context.cwd, input.path ?? ".");
      if (!base.ok) return toolError(base.error);
      const root = resolveWorkspacePath(context.cwd, ".");
      if (!root.ok) return toolError(root.error);
      let isFolder: boolean;
      try {
        isFolder = (await stat(base.real)).isDirectory();
      } catch {
        return toolError(`${base.display} does not exist`);
      }
      const max = input.max_results ?? GREP_DEFAULT_RESULTS;
      const keep = input.glob === undefined ? () => true : globFilter(input.glob);
      const lines: string[] = [];
      let searched = 0;
      let skippedBinary = 0;
      let skippedLarge = 0;
      let truncated = false;
      const search = async (real: string, display: string): Promise<boolean> => {
        const s = await stat(real);
        if (s.size > TEXT_FILE_MAX_BYTES) {
          skippedLarge++;
          return true;
        }
        const bytes = await readFile(real);
        if (looksBinary(bytes)) {
          skippedBinary++;
          return true;
        }
        searched++;
        const text = bytes.toString("utf8");
        const all = splitLines(text);
        for (let i = 0; i < all.length; i++) {
          const line = all[i] as string;
          if (!re.test(line)) continue;
          if (lines.length >= max) {
            truncated = true;
            return false;
          }
          const shown = line.length > GREP_MAX_LINE_CHARS ? `${line.slice(0, GREP_MAX_LINE_CHARS)}…` : line;
          lines.push(`${display}:${i + 1}: ${shown}`);
        }
        return true;
      };
      let limited = false;
      if (isFolder) {
        ({ limited } = await walkFiles(
          base.real,
          root.real,
          ({ real, rel }) => (keep(rel) ? search(real, below(base.display, rel)) : true),
          context.signal,
        ));
      } else {
        await search(base.real, base.display);
      }
      const notes: string[] = [];
      if (truncated) notes.push(`[stopped at ${max} matching lines; narrow the pattern, path or glob]`);
      if (skippedBinary > 0) notes.push(`[${skippedBinary} binary files skipped]`);
      if (skippedLarge > 0) notes.push(`[${skippedLarge} files over ${TEXT_FILE_MAX_BYTES} bytes skipped]`);
      if (limited) notes.push("[the search stopped at its entry limit; give a narrower path]");
      if (lines.length === 0) {
        return {
          ok: true,
          output: [
            `no lines match /${input.pattern}/ in ${base.display} (${searched} files searched)`,
            ...notes,
          ].join("\n"),
        };
      }
      return { ok: true, output: [...lines, ...notes].join("\n") };
    },
  });
}
