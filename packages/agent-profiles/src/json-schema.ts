import { z } from "zod";
import { AgentProfileFileSchema } from "./schema/agent-profile";
import { ModelProfileFileSchema } from "./schema/model-profile";
import { SettingsFileSchema } from "./schema/settings";

const generate = (schema: z.ZodType, title: string, description: string) => ({
  ...z.toJSONSchema(schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }),
  title,
  description,
});

/** JSON Schema of an agent profile file as a user writes it (`schemas/agent-profile.schema.json`). */
export function agentProfileJsonSchema(): Record<string, unknown> {
  return generate(
    AgentProfileFileSchema,
    "iCode agent profile",
    "An agent profile file: <config>/agents/<name>.yaml or .chrys/agents/*.yaml. See docs/agents.md.",
  );
}

/** JSON Schema of a model profile file (`schemas/models.schema.json`). */
export function modelProfileJsonSchema(): Record<string, unknown> {
  return generate(
    ModelProfileFileSchema,
    "iCode model profile",
    "A model profile file: <config>/models/<id>.yaml. See docs/agents.md.",
  );
}

/** JSON Schema of the settings this package reads (`schemas/settings.schema.json`). */
export function settingsJsonSchema(): Record<string, unknown> {
  return generate(
    SettingsFileSchema,
    "iCode settings (agents, models, requests)",
    "<config>/settings.yaml and .chrys/settings.yaml. See docs/agents.md.",
  );
}
