import { type ConfigProblem, describeValue, ProblemSink } from "../problems";
import { parseJsonObject } from "../schema/common";
import {
  isProvider,
  ModelProfileFileSchema,
  type ModelProfileSettings,
  OUTPUT_CAP_KEYS,
  PROVIDERS,
} from "../schema/model-profile";
import { childPath, parseYaml } from "../yaml-source";
import { DROP, type FieldRule, isMapping, type Reader, readObject, warnLiteralTemplates } from "./fields";

export interface ModelFileRead {
  /** The profile with `id` filled in from the file name, or null when the file is skipped. */
  settings: (ModelProfileSettings & { id: string }) | null;
  problems: ConfigProblem[];
  /** The line of a field in the file, when the file was YAML. */
  lineOf?: (field: string) => number | null;
}

const INTEGER_FIELDS = ["max_context_tokens", "max_output_tokens", "http_max_retries"];
const NUMBER_FIELDS = ["http_connect_timeout", "http_read_timeout"];

/**
 * Reads a model profile (agent-profiles.md 4.1). Skipped (an error): not YAML, not a mapping, no `name`, a
 * number field of the wrong type (booleans included), `api_key` together with `api_key_env`. Out-of-range
 * numbers and unknown `api_style` values are warnings that fall back to the default.
 */
export function readModelProfile(text: string, file: string | null, fileStem: string): ModelFileRead {
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const sink = new ProblemSink(file);
    sink.add(
      "config_not_yaml",
      "error",
      null,
      `not valid YAML: ${parsed.message}; the model profile is not loaded`,
      parsed.line,
    );
    return { settings: null, problems: sink.problems };
  }
  const { source } = parsed;
  const sink = new ProblemSink(file, source.lineOf);
  const raw = source.value;
  if (!isMapping(raw)) {
    sink.error(
      "config_not_mapping",
      null,
      `expected a mapping of model profile fields (name: …), found ${describeValue(raw)}; the model profile is not loaded`,
    );
    return { settings: null, problems: sink.problems };
  }
  const r: Reader = { sink, source, kept: [], errorEffect: "the model profile is not loaded" };
  const rules: Record<string, FieldRule> = {
    id: {
      read: (r2, v, f) => {
        if (v === null) return DROP;
        if (typeof v === "string") return v;
        r2.sink.error(
          "config_field_invalid",
          f,
          `id must be a YAML string, found ${describeValue(v)}; ${r2.errorEffect}. Quote it: id: "${String(v)}".`,
        );
        return DROP;
      },
    },
    name: { invalid: "error" },
    provider: {
      read: (r2, v, f) => {
        if (v === null) return DROP;
        if (typeof v === "string") return v;
        r2.sink.warn(
          "config_field_invalid",
          f,
          `expected a provider name (${Object.keys(PROVIDERS).join(", ")}), found ${describeValue(v)}; the profile is unusable`,
        );
        return String(v);
      },
    },
    api_key_env: { invalid: "error" },
    http_headers: { read: (r2, v, f) => readJsonObject(r2, v, f, true) },
    chat_options: { read: (r2, v, f) => readJsonObject(r2, v, f, false) },
  };
  for (const key of [...INTEGER_FIELDS, ...NUMBER_FIELDS])
    rules[key] = { invalid: "warning", wrongType: "error" };
  const accepted = readObject(r, raw, "", { schema: ModelProfileFileSchema, invalid: "warning", rules });
  if (
    typeof accepted["api_key"] === "string" &&
    accepted["api_key"] !== "" &&
    accepted["api_key_env"] !== undefined
  ) {
    sink.error(
      "config_field_invalid",
      "api_key_env",
      `api_key and api_key_env are both set; keep one (api_key_env: NAME is short for api_key: "{{NAME}}"); ${r.errorEffect}`,
    );
  }
  moveOutputCaps(r, accepted);
  for (const key of ["base_url", "model_id"]) {
    warnLiteralTemplates(r, accepted[key], key, "api_key, http_headers values and chat_options values");
  }
  if (sink.failed) return { settings: null, problems: sink.problems };
  const result = ModelProfileFileSchema.safeParse(accepted);
  if (!result.success) {
    sink.error(
      "config_field_invalid",
      null,
      `internal: the profile passed every field check but not the schema (${result.error.message}); ${r.errorEffect}`,
    );
    return { settings: null, problems: sink.problems };
  }
  const settings = { ...result.data, id: result.data.id ?? fileStem };
  // api_key_env: NAME is short for api_key: "{{NAME}}" (ours), so callers resolve one field.
  if (settings.api_key_env !== undefined) settings.api_key = `{{${settings.api_key_env}}}`;
  if (
    settings.api_style === "responses" &&
    isProvider(settings.provider) &&
    !(PROVIDERS[settings.provider].styles as readonly string[]).includes("responses")
  ) {
    sink.warn(
      "config_field_invalid",
      "api_style",
      `provider ${settings.provider} always uses Chat Completions; api_style responses is ignored`,
    );
    settings.api_style = "chat_completions";
  }
  if (
    settings.api_style === "chat_completions" &&
    "n" in settings.chat_options &&
    settings.chat_options["n"] !== 1
  ) {
    sink.warn(
      "config_field_invalid",
      "chat_options.n",
      `Chat Completions accepts n only as 1, found ${describeValue(settings.chat_options["n"])}; it is removed`,
    );
    delete settings.chat_options["n"];
  }
  return { settings, problems: sink.problems, lineOf: source.lineOf };
}

function readJsonObject(r: Reader, value: unknown, field: string, stringValues: boolean): unknown {
  if (value === null) return DROP;
  let object: Record<string, unknown> | null;
  if (typeof value === "string") {
    object = parseJsonObject(value);
    if (object === null) {
      r.sink.warn(
        "config_field_invalid",
        field,
        `expected JSON object text such as '{"temperature": 0.2}' (or a YAML mapping), found ${describeValue(value)}; the field is ignored`,
      );
      return DROP;
    }
  } else if (isMapping(value)) object = value;
  else {
    r.sink.warn(
      "config_field_invalid",
      field,
      `expected JSON object text or a mapping, found ${describeValue(value)}; the field is ignored`,
    );
    return DROP;
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(object)) {
    const at = childPath(field, key);
    if (stringValues && typeof v !== "string") {
      r.sink.warn(
        "config_field_invalid",
        at,
        `header values must be strings, found ${describeValue(v)}; the header is dropped`,
      );
    } else if (!stringValues && (key === "stream" || key === "messages")) {
      r.sink.warn(
        "config_field_invalid",
        at,
        `${key} is set by the engine and is not allowed in chat_options; it is removed${key === "stream" ? " (use the stream field)" : ""}`,
      );
    } else out[key] = v;
  }
  return out;
}

/** `chat_options.max_tokens` (and aliases) move into `max_output_tokens`, unless that field is written. */
function moveOutputCaps(r: Reader, accepted: Record<string, unknown>): void {
  const options = accepted["chat_options"];
  if (!isMapping(options)) return;
  for (const key of OUTPUT_CAP_KEYS) {
    if (!(key in options)) continue;
    const v = options[key];
    delete options[key];
    const at = childPath("chat_options", key);
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) {
      r.sink.warn(
        "config_field_invalid",
        at,
        `an output cap must be a positive integer, found ${describeValue(v)}; it is removed`,
      );
    } else if (accepted["max_output_tokens"] === undefined) {
      accepted["max_output_tokens"] = v;
    } else if (accepted["max_output_tokens"] !== v) {
      r.sink.warn(
        "config_key_ignored",
        at,
        `max_output_tokens is also set (${String(accepted["max_output_tokens"])}); that field wins and ${key} is removed`,
      );
    }
  }
}
