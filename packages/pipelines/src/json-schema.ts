import { z } from "zod";
import { PipelineDefinitionSchema } from "./definition";

/**
 * JSON Schema of a pipeline definition as a user writes it (`schemas/pipeline.schema.json`): the input shape,
 * so fields with defaults are optional. It says what the fields hold; `validatePipeline` checks the rest
 * (dependencies, templates, the output_schema subset, profiles).
 */
export function pipelineJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(PipelineDefinitionSchema, {
      io: "input",
      unrepresentable: "any",
      target: "draft-2020-12",
    }),
    title: "iCode pipeline",
    description:
      "A JSON pipeline definition: agent nodes with depends_on, prompt templates and structured handoffs. See docs/pipelines.md.",
  };
}
