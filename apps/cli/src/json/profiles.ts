import { AgentListingSchema, ModelListingSchema } from "@icode/workflow-engine";
import type { z } from "zod";

/** `icode agents --json`: one object (agent-profiles.md 5); problems only in `problems`. */
export const AgentsListJsonSchema = AgentListingSchema;
export type AgentsListJson = z.infer<typeof AgentsListJsonSchema>;

/** `icode models --json`: one object (agent-profiles.md 5); never an API key. */
export const ModelsListJsonSchema = ModelListingSchema;
export type ModelsListJson = z.infer<typeof ModelsListJsonSchema>;
