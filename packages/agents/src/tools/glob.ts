import { stat } from "node:fs/promises";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { globToRegExp } from "./glob-pattern";
import { walkFiles } from "./walk";
import { resolveWorkspacePath } from "./workspace";

/** Paths listed by one call at most. */
export const GLOB_MAX_RESULTS = 500;

const GlobInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      "Glob relative to path: * and ? within a folder, ** across folders, {a,b}, [abc] (e.g. src/**/*.ts)",
    ),
  path: z.string().optional().describe("Folder to search, relative to the working directory (default .)"),
});

/** Joins a folder's display path and a path below it. */
export function below(display: string, rel: string): string {
  return display === "." ? rel : `${display}/${rel}`;
}

/**
 * `glob`: the files below a folder of the working directory whose relative path matches a glob, sorted by
 * path, at most 500 (the answer says how many more). `.git` folders are skipped; links to folders are not
 * followed; only files are listed.
 */
export function globTool(): AgentTool {
  return defineTool({
    name: "glob",
    kind: "search",
    activityKind: "search",
    description:
      "Find files by name inside the working directory with a glob pattern (e.g. **/*.py, src/*.{ts,tsx}). " +
      "Returns matching file paths relative to the working directory.",
    input: GlobInput,
    title: (input) =>
      `glob ${brief(input.pattern)}${input.path === undefined ? "" : ` in ${brief(input.path)}`}`,
    target(input, context) {
      const base = resolveWorkspacePath(context.cwd, input.path ?? ".");
      return { type: "read", path: base.ok ? base.real : (input.path ?? ".") };
    },
    async execute(input, context) {
      if (input.pattern.startsWith("/") || input.pattern.split("/").includes("..")) {
        return toolError(
          `the pattern ${input.pattern} must be relative to path, without ".." (use path to choose the folder)`,
        );
      }
      const base = resolveWorkspacePath(context.cwd, input.path ?? ".");
      if (!base.ok) return toolError(base.error);
      const root = resolveWorkspacePath(context.cwd, ".");
      if (!root.ok) return toolError(root.error);
      try {
        if (!(await stat(base.real)).isDirectory()) return toolError(`${base.display} is not a folder`);
      } catch {
        return toolError(`${base.display} does not exist`);
      }
      const re = globToRegExp(input.pattern);
      const found: string[] = [];
      let more = 0;
      const { limited } = await walkFiles(
        base.real,
        root.real,
        ({ rel }) => {
          if (!re.test(rel)) return true;
          if (found.length < GLOB_MAX_RESULTS) found.push(below(base.display, rel));
          else more++;
          return true;
        },
        context.signal,
      );
      if (found.length === 0) {
        return {
          ok: true,
          output: `no files match ${input.pattern} in ${base.display}${limited ? " (search stopped at the entry limit)" : ""}`,
        };
      }
      const notes: string[] = [];
      if (more > 0) notes.push(`[${more} more files match; narrow the pattern]`);
      if (limited) notes.push("[the search stopped at its entry limit; give a narrower path]");
      return { ok: true, output: [...found, ...notes].join("\n") };
    },
  });
}
