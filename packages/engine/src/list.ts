import { readFileSync } from "node:fs";
import { join } from "node:path";
import { discoverWorkflows, readTrustTitles } from "@icode/workflow-discovery";
import type { Diagnostic } from "@icode/workflow-errors";
import { type EngineContext, type EngineOptions, engineContext } from "./context";
import type { ListedWorkflow } from "./listed-workflow";

// Listing loads neither the zod API nor anything of validate or run (`icode workflow list` is one process per
// call): the schema lives in ./listed-workflow, and this file imports only discovery's plain functions.
export { type ListedWorkflow, ListedWorkflowSchema } from "./listed-workflow";

export interface ListResult {
  workflows: ListedWorkflow[];
  /** Candidates that could not be read, with the reason (they shadow nothing). */
  skipped: { id: string | null; path: string; reason: Diagnostic }[];
}

/**
 * Titles of the built-in workflows, kept next to them so listing never runs workflow code. The file ships
 * with the engine (`{ "<id>": { "title": "…" } }`); an entry without a string title is ignored.
 */
function builtinTitles(builtinDir: string): Map<string, string> {
  const titles = new Map<string, string>();
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(join(builtinDir, "index.json"), "utf8"));
  } catch {
    return titles;
  }
  if (typeof index !== "object" || index === null) return titles;
  for (const [id, entry] of Object.entries(index)) {
    const title: unknown = typeof entry === "object" && entry !== null ? entry.title : undefined;
    if (typeof title === "string") titles.set(id, title);
  }
  return titles;
}

/** `icode workflow list`: the discovery rules, titles from trust confirmations; never runs workflow code. */
export async function listWorkflows(ctx: EngineContext): Promise<ListResult> {
  const found = await discoverWorkflows({
    cwd: ctx.cwd,
    chrysHome: ctx.chrysHome,
    builtinDir: ctx.builtinDir,
    uid: ctx.uid,
  });
  const custom = found.workflows.filter((w) => w.source !== "builtin").map((w) => w.path);
  const trusted = await readTrustTitles(ctx.chrysHome, custom, { uid: ctx.uid });
  const builtin = found.workflows.some((w) => w.source === "builtin")
    ? builtinTitles(ctx.builtinDir)
    : new Map<string, string>();
  const workflows = found.workflows.map(
    (w): ListedWorkflow => ({
      id: w.id,
      source: w.source,
      layout: w.layout,
      title: (w.source === "builtin" ? builtin.get(w.id) : trusted.get(w.path)) ?? "",
      path: w.path,
    }),
  );
  return {
    workflows,
    skipped: found.skipped.map((s) => ({ id: s.id, path: s.path, reason: s.reason })),
  };
}

/**
 * `createEngine(options).list()` without an engine: for a process that only lists workflows, such as
 * `icode workflow list`, since it loads none of the validate and run machinery.
 */
export function listWorkflowsFor(options: EngineOptions): Promise<ListResult> {
  return listWorkflows(engineContext(options));
}
