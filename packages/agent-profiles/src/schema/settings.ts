import { z } from "zod";
import { WebFetchSchema, WebSearchSchema } from "./web-tools";

/** `<config>/settings.yaml` and `.chrys/settings.yaml`: only the keys this package reads. */
export const SettingsFileSchema = z.strictObject({
  agent: z.strictObject({ default_profile: z.string().trim().min(1).optional() }).optional(),
  model: z
    .strictObject({ profile: z.strictObject({ active: z.string().trim().min(1).optional() }).optional() })
    .optional(),
  llm: z
    .strictObject({
      retry: z.strictObject({ max_transient: z.int().min(0).nullable().optional() }).optional(),
    })
    .optional(),
  project: z
    .strictObject({
      config_enabled: z.boolean().optional().meta({ description: "User settings only." }),
      skills_enabled: z.boolean().optional().meta({ description: "User settings only." }),
    })
    .optional(),
  tools: z
    .strictObject({ web_search: WebSearchSchema.optional(), web_fetch: WebFetchSchema.optional() })
    .optional(),
});
