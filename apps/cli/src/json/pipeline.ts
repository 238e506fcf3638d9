import {
  PipelineCommandResultSchema,
  PipelineRunInspectionSchema,
  PipelineRunSchema,
  StoredDefinitionSchema,
} from "@icode/workflow-engine";
import { z } from "zod";

/** The `version` of every `icode pipeline … --json` object; it goes up when a shape changes incompatibly. */
export const PIPELINE_JSON_VERSION = 1;

/**
 * One stored definition as listings show it: its lifecycle fields and the size of the definition, without
 * the nodes (`icode pipeline show --json` has the whole definition).
 */
const PipelineSummaryJsonSchema = z.strictObject({
  id: StoredDefinitionSchema.shape.id,
  name: StoredDefinitionSchema.shape.name,
  description: z.string(),
  status: StoredDefinitionSchema.shape.status,
  revision: StoredDefinitionSchema.shape.revision,
  source: StoredDefinitionSchema.shape.source,
  locked: StoredDefinitionSchema.shape.locked,
  node_count: z.number().int().min(1),
  updated_at: StoredDefinitionSchema.shape.updated_at,
  published_at: StoredDefinitionSchema.shape.published_at,
});
export type PipelineSummaryJson = z.infer<typeof PipelineSummaryJsonSchema>;

/** `icode pipeline list --json`. */
export const PipelineListJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  definitions: z.array(PipelineSummaryJsonSchema),
});
export type PipelineListJson = z.infer<typeof PipelineListJsonSchema>;

/**
 * `icode pipeline show --json`: the whole stored definition. The definition itself is the one of
 * `@icode/pipelines`' `schemas/pipeline.schema.json` with every default filled in (what `icode pipeline
 * export` prints); here it is JSON, since its schema's defaults and empty-string rules are not JSON Schema.
 */
export const PipelineShowJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  definition: StoredDefinitionSchema.extend({
    definition: z.record(z.string(), z.unknown()).meta({
      description:
        "The pipeline definition, every default filled in (see @icode/pipelines schemas/pipeline.schema.json)",
    }),
  }),
});
export type PipelineShowJson = z.infer<typeof PipelineShowJsonSchema>;

/** `icode pipeline import|publish|copy --json`: the definition that was stored, as listings show it. */
export const PipelineChangeJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  definition: PipelineSummaryJsonSchema,
});
export type PipelineChangeJson = z.infer<typeof PipelineChangeJsonSchema>;

/** `icode pipeline delete --json`. */
export const PipelineDeleteJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  id: z.string(),
  deleted: z.literal(true),
});
export type PipelineDeleteJson = z.infer<typeof PipelineDeleteJsonSchema>;

/** A run as the CLI prints it: without the definition snapshot (`icode pipeline show` has definitions). */
const PipelineRunJsonSchema = PipelineRunSchema.omit({ definition: true });

/** `icode pipeline runs --json`: newest first. */
export const PipelineRunsJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  runs: z.array(PipelineRunJsonSchema),
});
export type PipelineRunsJson = z.infer<typeof PipelineRunsJsonSchema>;

/** `icode pipeline inspect --json`: the engine's `PipelineRunInspectionSchema`, the run without its snapshot. */
export const PipelineInspectJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  ...PipelineRunInspectionSchema.shape,
  run: PipelineRunJsonSchema,
});
export type PipelineInspectJson = z.infer<typeof PipelineInspectJsonSchema>;

/** Why driving in the foreground stopped (the driver's `stop`). */
const DriveStopSchema = z.enum([
  "converged",
  "paused",
  "waiting_approval",
  "stopped",
  "lease_lost",
  "lease_held",
]);

/** `icode pipeline run --json`, and the `driven` part of a control action that drove the run. */
export const PipelineRunResultJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  stop: DriveStopSchema,
  run: PipelineRunJsonSchema,
  nodes: PipelineRunInspectionSchema.shape.nodes,
});
export type PipelineRunResultJson = z.infer<typeof PipelineRunResultJsonSchema>;

/** `icode pipeline approve|retry|skip|pause|resume|cancel|stop-sessions --json`. */
export const PipelineControlJsonSchema = z.strictObject({
  version: z.literal(PIPELINE_JSON_VERSION),
  action: z.enum(["approve_node", "retry_node", "skip_node", "pause", "resume", "cancel", "stop_sessions"]),
  result: PipelineCommandResultSchema,
  /** `driver`: the run's live driver applied it; `direct`: no driver held the run, this process did. */
  via: z.enum(["driver", "direct"]),
  run: PipelineRunJsonSchema,
  /** Set when this process then drove the run in the foreground: why it stopped. */
  stop: DriveStopSchema.nullable(),
});
export type PipelineControlJson = z.infer<typeof PipelineControlJsonSchema>;
