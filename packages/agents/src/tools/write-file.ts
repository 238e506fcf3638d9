import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import type { AgentTool } from "../tool";
import { brief, defineTool, toolError } from "./define-tool";
import { splitLines } from "./text-file";
import { insideGitRepository, resolveWorkspacePath } from "./workspace";

const WriteFileInput = z.strictObject({
  path: z.string().describe("File path, relative to the working directory"),
  content: z.string().describe("The whole new content of the file"),
});

/**
 * `write_file`: creates or overwrites a file inside the working directory with the given text (UTF-8),
 * creating missing parent folders. Its approval target is a write, with whether it lands in the working
 * directory's Git repository.
 */
export function writeFileTool(): AgentTool {
  return defineTool({
    name: "write_file",
    kind: "filesystem.write",
    activityKind: "edit",
    description:
      "Create or overwrite a text file inside the working directory with the given content. Prefer " +
      "edit_file for changes to an existing file.",
    input: WriteFileInput,
    title: (input) => `write_file ${brief(input.path)}`,
    target(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      return path.ok
        ? { type: "write", path: path.real, insideGitRepository: insideGitRepository(context.cwd, path.real) }
        : { type: "write", path: input.path, insideGitRepository: false };
    },
    async execute(input, context) {
      const path = resolveWorkspacePath(context.cwd, input.path);
      if (!path.ok) return toolError(path.error);
      let existed = false;
      try {
        const s = await stat(path.real);
        if (s.isDirectory()) return toolError(`${path.display} is a folder; give a file path`);
        existed = true;
      } catch {}
      await mkdir(dirname(path.real), { recursive: true });
      await writeFile(path.real, input.content, "utf8");
      const bytes = Buffer.byteLength(input.content, "utf8");
      return {
        ok: true,
        output: `${existed ? "overwrote" : "created"} ${path.display} (${splitLines(input.content).length} lines, ${bytes} bytes)`,
      };
    },
  });
}
