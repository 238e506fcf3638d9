import { z } from "zod";
import { ENV_NAME, jsonObjectOrMapping } from "./common";

/** Wire protocol families (agent-profiles.md 4.2) and their default `base_url`. */
export const PROVIDERS = {
  openai: {
    protocol: "OpenAI Chat Completions or Responses",
    baseUrl: "https://api.openai.com/v1",
    styles: ["chat_completions", "responses"],
  },
  anthropic: {
    protocol: "Anthropic Messages",
    baseUrl: "https://api.anthropic.com",
    styles: ["chat_completions"],
  },
  "deepseek-openai": {
    protocol: "DeepSeek, OpenAI wire format",
    baseUrl: "https://api.deepseek.com",
    styles: ["chat_completions", "responses"],
  },
  "glm-openai": {
    protocol: "Zhipu GLM, OpenAI Chat Completions",
    baseUrl: "https://open.bigmodel.cn/api/paas/v4",
    styles: ["chat_completions"],
  },
} as const satisfies Record<string, { protocol: string; baseUrl: string; styles: readonly string[] }>;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as (keyof typeof PROVIDERS)[];
export type Provider = keyof typeof PROVIDERS;

export function isProvider(value: string): value is Provider {
  return Object.hasOwn(PROVIDERS, value);
}

export const API_STYLES = ["chat_completions", "responses"] as const;
export const ApiStyleSchema = z.enum(API_STYLES);

/** Keys of `chat_options` that are output caps: they move into `max_output_tokens` on load. */
export const OUTPUT_CAP_KEYS = ["max_tokens", "max_completion_tokens", "max_output_tokens"] as const;

/**
 * A model profile file, `<config>/models/<id>.yaml`. `provider` accepts any string so that a profile with an
 * unknown provider still loads and is listed as unusable; the JSON Schema offers the known ones.
 */
export const ModelProfileFileSchema = z.strictObject({
  id: z.string().trim().optional().meta({ description: "Defaults to the file name without extension." }),
  name: z.string().trim(),
  provider: z.string().trim().default("openai").meta({ enum: PROVIDER_NAMES }),
  api_style: ApiStyleSchema.default("chat_completions"),
  model_id: z.string().trim().default(""),
  base_url: z.string().trim().default(""),
  api_key: z.string().default(""),
  api_key_env: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
  max_context_tokens: z.int().min(100).default(200000),
  max_output_tokens: z.int().positive().default(32000),
  http_connect_timeout: z.number().positive().default(10),
  http_read_timeout: z.number().positive().default(300),
  http_max_retries: z
    .int()
    .min(0)
    .default(2)
    .meta({ description: "Accepted but not applied; the engine owns retries." }),
  verify_ssl: z.boolean().default(true),
  bypass_proxy: z.boolean().default(false),
  http_headers: jsonObjectOrMapping(z.string()).default({}),
  chat_options: jsonObjectOrMapping(z.unknown()).default({}),
  stream: z.boolean().default(true),
  vision: z.boolean().default(false),
  stream_requires_finish_reason: z.boolean().default(false),
});
export type ModelProfileFile = z.input<typeof ModelProfileFileSchema>;
export type ModelProfileSettings = z.output<typeof ModelProfileFileSchema>;
