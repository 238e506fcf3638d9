import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { discoverWorkflows, readTrust } from "@icode/workflow-discovery";
import type { Diagnostic } from "@icode/workflow-errors";
import { z } from "zod";
import type { EngineContext } from "./context";

export const ListedWorkflowSchema = z.object({
  id: z.string(),
  source: z.enum(["project", "global", "builtin"]),
  layout: z.enum(["file", "package"]),
  /** From the saved trust confirmation (custom) or the built-in index; `""` when unknown. */
  title: z.string(),
  /** The entry file. */
  path: z.string(),
});
export type ListedWorkflow = z.infer<typeof ListedWorkflowSchema>;

export interface ListResult {
  workflows: ListedWorkflow[];
  /** Candidates that could not be read, with the reason (they shadow nothing). */
  skipped: { id: string | null; path: string; reason: Diagnostic }[];
}

/** Titles of the built-in workflows, kept next to them so listing never runs workflow code. */
function builtinTitles(builtinDir: string): Record<string, string> {
  const file = join(builtinDir, "index.json");
  if (!existsSync(file)) return {};
  const parsed = z
    .record(z.string(), z.object({ title: z.string() }))
    .safeParse(JSON.parse(readFileSync(file, "utf8")));
  return parsed.success
    ? Object.fromEntries(Object.entries(parsed.data).map(([id, v]) => [id, v.title]))
    : {};
}

/** `icode workflow list`: the discovery rules, titles from trust confirmations; never runs workflow code. */
export async function listWorkflows(ctx: EngineContext): Promise<ListResult> {
  const found = await discoverWorkflows({
    cwd: ctx.cwd,
    chrysHome: ctx.chrysHome,
    builtinDir: ctx.builtinDir,
    uid: ctx.uid,
  });
  const builtin = builtinTitles(ctx.builtinDir);
  const workflows = await Promise.all(
    found.workflows.map(async (w): Promise<ListedWorkflow> => {
      let title = "";
      if (w.source === "builtin") title = builtin[w.id] ?? "";
      else title = (await readTrust(ctx.chrysHome, w.path, { uid: ctx.uid }))?.title ?? "";
      return { id: w.id, source: w.source, layout: w.layout, title, path: w.path };
    }),
  );
  return {
    workflows,
    skipped: found.skipped.map((s) => ({ id: s.id, path: s.path, reason: s.reason })),
  };
}
