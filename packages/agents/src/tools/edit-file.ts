import { writeFile } from "node:fs/promises";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { readTextFile } from "./text-file";
import { insideGitRepository, resolveWorkspacePath } from "./workspace";

const EditFileInput = z.strictObject({
  path: z.string().describe("File path, relative to the working directory"),
  old_string: z.string().min(1).describe("The exact text to replace, unique in the file"),
  new_string: z.string().describe("The text to put in its place"),
  replace_all: z
    .boolean()
    .optional()
    .describe("Replace every occurrence instead of requiring a unique one (default false)"),
});

/** Where `needle` occurs in `text`, without overlaps. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * `edit_file`: replaces an exact string in a text file inside the working directory. The string must occur
 * exactly once (or `replace_all` is set); none or several occurrences are a tool error that says so and
 * where, and nothing is written.
 */
export function editFileTool(): AgentTool {
  return defineTool({
    name: "edit_file",
    kind: "filesystem.write",
    activityKind: "edit",
    description:
      "Replace an exact string in a text file inside the working directory. old_string must match the " +
      "file exactly (whitespace included) and occur once, unless replace_all is true.",
    input: EditFileInput,
    title: (input) => `edit_file ${brief(input.path)}`,
    target(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      return path.ok
        ? { type: "write", path: path.real, insideGitRepository: insideGitRepository(context.cwd, path.real) }
        : { type: "write", path: input.path, insideGitRepository: false };
    },
    async execute(input, context) {
      if (input.old_string === input.new_string) {
        return toolError("old_string and new_string are the same; there is nothing to change");
      }
      const path = resolveWorkspacePath(context.cwd, input.path);
      if (!path.ok) return toolError(path.error);
      const file = await readTextFile(path.real, path.display);
      if (!file.ok) return toolError(file.error);
      const at = occurrences(file.text, input.old_string);
      if (at.length === 0) {
        return toolError(
          `old_string does not occur in ${path.display}; read the file and copy the text exactly, ` +
            `whitespace and line endings included`,
        );
      }
      if (at.length > 1 && input.replace_all !== true) {
        const lines = at.map((i) => lineOf(file.text, i));
        return toolError(
          `old_string occurs ${at.length} times in ${path.display} (lines ${lines.join(", ")}); ` +
            `include more surrounding text to make it unique, or set replace_all to true`,
        );
      }
      const updated = file.text.split(input.old_string).join(input.new_string);
      await writeFile(path.real, (file.bom ? "\uFEFF" : "") + updated, "utf8");
      const first = lineOf(updated, at[0] as number);
      return {
        ok: true,
        output:
          at.length === 1
            ? `edited ${path.display}: replaced 1 occurrence at line ${first}`
            : `edited ${path.display}: replaced ${at.length} occurrences`,
      };
    },
  });
}
