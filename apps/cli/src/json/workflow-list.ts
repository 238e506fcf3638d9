import { ListedWorkflowSchema } from "@icode/workflow-engine";
import { z } from "zod";

/** `icode workflow list --json`: the reference's object with a `workflows` array. */
export const WorkflowListJsonSchema = z.strictObject({ workflows: z.array(ListedWorkflowSchema) });
export type WorkflowListJson = z.infer<typeof WorkflowListJsonSchema>;
