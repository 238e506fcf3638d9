import { z } from "zod";
import { ENV_NAME } from "./common";

export const WEB_SEARCH_PROVIDER_TYPES = [
  "exa_mcp",
  "bing_html",
  "duckduckgo_html",
  "tavily",
  "brave",
  "exa",
  "custom_http",
] as const;
/** Provider types that need `api_key_env`. */
export const KEYED_WEB_SEARCH_TYPES = ["tavily", "brave", "exa"] as const;
/** Types usable by id without a `providers` entry (they need no key and no URL); ours. */
export const KEYLESS_WEB_SEARCH_TYPES = ["exa_mcp", "duckduckgo_html", "bing_html"] as const;

export const WebSearchProviderSchema = z
  .looseObject({
    type: z.enum(WEB_SEARCH_PROVIDER_TYPES),
    api_key_env: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
    url: z
      .string()
      .regex(/^https?:\/\/\S+$/u, "must be an http:// or https:// URL")
      .optional(),
  })
  .superRefine((p, ctx) => {
    if ((KEYED_WEB_SEARCH_TYPES as readonly string[]).includes(p.type) && p.api_key_env === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["api_key_env"],
        message: `a ${p.type} provider needs api_key_env`,
      });
    if (p.type === "custom_http" && p.url === undefined)
      ctx.addIssue({ code: "custom", path: ["url"], message: "a custom_http provider needs url" });
  });

/** `web_search` settings: a profile's section overrides the user settings field by field. */
export const WebSearchSchema = z.strictObject({
  mode: z
    .union([z.enum(["auto", "provider", "off"]), z.boolean()])
    .transform((m) => (m === true ? "auto" : m === false ? "off" : m))
    .optional(),
  provider: z.string().min(1).optional(),
  fallback_chain: z
    .array(z.string().min(1))
    .max(5)
    .refine((ids) => new Set(ids).size === ids.length, { message: "must not repeat an id" })
    .optional(),
  providers: z.record(z.string().min(1), WebSearchProviderSchema).optional(),
  num_results: z.int().min(1).max(20).optional(),
  timeout_seconds: z.number().min(1).max(120).optional(),
});

export const WebFetchSchema = z.strictObject({
  mode: z
    .union([z.enum(["on", "off"]), z.boolean()])
    .transform((m) => (m === true ? "on" : m === false ? "off" : m))
    .optional(),
  max_tokens: z.int().min(1).max(64000).optional(),
  timeout_seconds: z.number().min(1).max(120).optional(),
});
