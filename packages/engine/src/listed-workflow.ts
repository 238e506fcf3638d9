import { z } from "zod";

/** One row of `icode workflow list`. */
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
