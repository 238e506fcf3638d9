import path from "node:path";
import type { DiscoveredWorkflow, Target } from "./schema";

/**
 * The target of a discovered workflow, for `readTarget` (a run by ID reads and digests the workflow the
 * way validate does). `path` is the entry file's path, or the folder's for a workflow folder.
 */
export function targetOf(workflow: DiscoveredWorkflow): Target {
  return {
    path: workflow.packageDir ?? workflow.path,
    layout: workflow.layout,
    workflowId: workflow.id,
    entry: path.resolve(workflow.path),
    packageDir: workflow.packageDir,
    location: workflow.source,
  };
}
