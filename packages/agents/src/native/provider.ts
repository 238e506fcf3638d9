import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { type ModelProfile, PROVIDERS } from "@icode/agent-profiles";
import { resolveTemplates } from "@icode/agent-profiles/policy";
import { defaultSettingsMiddleware, type LanguageModel, wrapLanguageModel } from "ai";
import { failure, type ModelFailure } from "./classify";
import { type DispatcherPool, type HttpSettings, providerFetch, type RequestExtras } from "./http";

/**
 * A model profile made into an AI SDK model for one request: the provider by `provider` (`openai`,
 * `deepseek-openai`, `glm-openai` through `@ai-sdk/openai-compatible`, `anthropic` through
 * `@ai-sdk/anthropic`; `api_style: responses` through `@ai-sdk/openai`), `base_url` or the provider's default (agent-profiles.md 4.2), `api_key`,
 * `http_headers` and `chat_options` with their `{{NAME}}` resolved now (so a changed variable applies to
 * the next request, and a missing one fails it, naming the variable).
 */
export type ResolvedModel = { ok: true; model: LanguageModel } | { ok: false; failure: ModelFailure };

/** `chat_options` keys that are not request fields: they say where the rest goes. */
const EXTRA_KEYS = ["extra_body", "extra_headers", "extra_query"] as const;
/** Fields the engine owns: the conversation (`messages`, or the Responses API's `input`) and the streaming mode. */
const RESERVED_BODY_KEYS = ["messages", "input", "stream", "model"];

/** Refuses at attempt start what the pinned SDKs cannot do for this profile (never accepted and ignored). */
export function unsupportedSetting(model: ModelProfile): ModelFailure | null {
  if (!Object.hasOwn(PROVIDERS, model.provider)) {
    return failure(
      "model_config_unsupported",
      `model profile "${model.name}" (${model.file}) has provider "${model.provider}"; expected one of ${Object.keys(PROVIDERS).join(", ")}`,
    );
  }
  return null;
}

/**
 * SDK models already made, by everything they were made from: making one builds the provider's response
 * schemas, which costs more than a loopback request, so a chain of agent nodes on one profile reuses it.
 */
export class ModelCache {
  readonly #models = new Map<string, LanguageModel>();
  constructor(readonly limit = 64) {}

  get(key: string, make: () => LanguageModel): LanguageModel {
    const found = this.#models.get(key);
    if (found !== undefined) return found;
    const made = make();
    if (this.#models.size >= this.limit) this.#models.delete(this.#models.keys().next().value as string);
    this.#models.set(key, made);
    return made;
  }
}

export function resolveModel(
  model: ModelProfile,
  env: Readonly<Record<string, string | undefined>>,
  pool: DispatcherPool,
  cache: ModelCache = new ModelCache(1),
): ResolvedModel {
  const where = `model profile "${model.name}" (${model.file})`;
  const missing = (field: string, name: string): ResolvedModel => ({
    ok: false,
    failure: failure(
      "model_template_missing",
      `${where}: ${field} uses {{${name}}}, but the environment variable ${name} is not set or empty; set it before running, or change ${field}`,
    ),
  });
  const key = resolveTemplates(model.api_key, env);
  if (!key.ok) return missing("api_key", key.missing);
  const headers = resolveTemplates(model.http_headers, env);
  if (!headers.ok)
    return missing(`http_headers.${headerWith(model.http_headers, headers.missing)}`, headers.missing);
  const options = resolveDeep(model.chat_options, env, "chat_options");
  if (!options.ok) return missing(options.field, options.missing);
  const extras = splitChatOptions(options.value);
  const http = {
    connectTimeoutMs: Math.ceil(model.http_connect_timeout * 1000),
    readTimeoutMs: Math.ceil(model.http_read_timeout * 1000),
    verifySsl: model.verify_ssl,
    bypassProxy: model.bypass_proxy,
  };
  const proxyEnv = PROXY_VARIABLES.map((name) => env[name] ?? null);
  const cacheKey = JSON.stringify([model, key.value, headers.value, extras, proxyEnv]);
  return {
    ok: true,
    model: cache.get(cacheKey, () => makeModel(model, key.value, headers.value, extras, http, env, pool)),
  };
}

/** The environment variables the dispatcher's proxy choice reads. */
const PROXY_VARIABLES = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"];

function makeModel(
  model: ModelProfile,
  apiKey: string,
  headerValues: Record<string, string>,
  extras: RequestExtras,
  http: HttpSettings,
  env: Readonly<Record<string, string | undefined>>,
  pool: DispatcherPool,
): LanguageModel {
  const fetch = providerFetch((url) => pool.get(http, env, url), extras);
  const provider = model.provider as keyof typeof PROVIDERS;
  const base = (model.base_url === "" ? PROVIDERS[provider].baseUrl : model.base_url).replace(/\/+$/u, "");

  if (provider === "anthropic") {
    // The profile's base_url has no /v1 (agent-profiles.md 4.2); the SDK's baseURL includes it.
    const baseURL = /\/v1$/u.test(base) ? base : `${base}/v1`;
    const anthropic = createAnthropic({
      baseURL,
      headers: headerValues,
      fetch,
      // Always a string, so that the SDK never falls back to the process's ANTHROPIC_API_KEY.
      apiKey,
    });
    return anthropic(model.model_id);
  }
  if (model.api_style === "responses") {
    // OpenAI's Responses API (`openai`, `deepseek-openai`): `@ai-sdk/openai`, the line that matches `ai` 6.
    const responses = createOpenAI({
      name: provider,
      baseURL: base,
      apiKey,
      headers: headerValues,
      fetch,
    });
    // The loop keeps the conversation, so every request carries it whole. Left to its default (`store`
    // unset, which OpenAI takes as true) the SDK sends earlier output items as `item_reference`s to what the
    // provider stored: that fails where nothing is stored (`store: false` in chat_options, zero data
    // retention, DeepSeek's stateless Responses API). Only `chat_options.store: true` asks for storage, and
    // then the SDK may refer to stored items. With `store: false` the SDK also asks reasoning models for
    // their encrypted reasoning, so it goes back too.
    const store = extras.body["store"] === true;
    return wrapLanguageModel({
      model: responses.responses(model.model_id),
      middleware: defaultSettingsMiddleware({ settings: { providerOptions: { openai: { store } } } }),
    });
  }
  const openai = createOpenAICompatible({
    name: provider,
    baseURL: base,
    headers: headerValues,
    includeUsage: true,
    fetch,
    ...(apiKey === "" ? {} : { apiKey }),
  });
  return openai.chatModel(model.model_id);
}

function headerWith(headers: Readonly<Record<string, string>>, name: string): string {
  return Object.entries(headers).find(([, v]) => v.includes(`{{${name}}}`))?.[0] ?? "?";
}

/** `chat_options` → request fields, `extra_body` (merged last), `extra_headers`, `extra_query`. */
export function splitChatOptions(options: Readonly<Record<string, unknown>>): RequestExtras {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (!(EXTRA_KEYS as readonly string[]).includes(k) && !RESERVED_BODY_KEYS.includes(k)) body[k] = v;
  }
  const extraBody = isRecord(options["extra_body"]) ? options["extra_body"] : {};
  for (const [k, v] of Object.entries(extraBody)) if (!RESERVED_BODY_KEYS.includes(k)) body[k] = v;
  return {
    body,
    headers: stringValues(options["extra_headers"]),
    query: stringValues(options["extra_query"]),
  };
}

function stringValues(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === "string" ? v : String(v)]),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type DeepResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; missing: string; field: string };

/** Resolves `{{NAME}}` in every string inside a JSON value; the first missing variable fails it. */
function resolveDeep(
  value: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  path: string,
): DeepResult {
  let missing: { missing: string; field: string } | null = null;
  const walk = (v: unknown, at: string): unknown => {
    if (missing !== null) return v;
    if (typeof v === "string") {
      const r = resolveTemplates(v, env);
      if (r.ok) return r.value;
      missing = { missing: r.missing, field: at };
      return v;
    }
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${at}[${i}]`));
    if (isRecord(v))
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item, `${at}.${k}`)]));
    return v;
  };
  const out = walk(value, path) as Record<string, unknown>;
  return missing === null
    ? { ok: true, value: out }
    : { ok: false, ...(missing as { missing: string; field: string }) };
}
