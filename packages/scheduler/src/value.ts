import { JsonValueSchema } from "@icode/workflow-graph";
import { z } from "zod";

/**
 * Values as the scheduler moves them. `WorkflowValue` and `SourceValue` are `@icode/workflow-graph`'s
 * schemas (re-exported here so that consumers of the event stream need one import); the scheduler never
 * copies a value, it passes references on.
 */
export {
  type SourceValue,
  type WorkflowValue,
  WorkflowValueSchema,
} from "@icode/workflow-graph";

/** One final output of a run, in `output()` declaration order (the run JSON's `outputs[]` item). */
export const RunOutputSchema = z.object({
  node_id: z.string(),
  activation_id: z.string(),
  text: z.string(),
  data: JsonValueSchema.nullable(),
});
export type RunOutput = z.infer<typeof RunOutputSchema>;
