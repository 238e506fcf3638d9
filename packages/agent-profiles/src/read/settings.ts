import { type ConfigProblem, describeValue, ProblemSink } from "../problems";
import { SettingsFileSchema } from "../schema/settings";
import { WebFetchSchema, WebSearchSchema } from "../schema/web-tools";
import { parseYaml } from "../yaml-source";
import { type FieldRule, isMapping, type ObjectSpec, type Reader, readObject, readSection } from "./fields";

export type SettingsScope = "user" | "project";

export interface SettingsFileRead {
  /** The valid values, as written; an invalid value is reported and left out. */
  values: Record<string, unknown>;
  problems: ConfigProblem[];
  /** The line of a field in the file, when the file was YAML. */
  lineOf?: (field: string) => number | null;
}

/**
 * Reads a settings file. Dotted keys written flat (`model.profile.active: X`) are read as the nested form
 * (ours); an invalid value is a warning and that key takes its value from the next source.
 */
export function readSettingsFile(text: string, file: string, scope: SettingsScope): SettingsFileRead {
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const sink = new ProblemSink(file);
    sink.add(
      "config_not_yaml",
      "warning",
      null,
      `not valid YAML: ${parsed.message}; these settings are not used`,
      parsed.line,
    );
    return { values: {}, problems: sink.problems };
  }
  const sink = new ProblemSink(file, parsed.source.lineOf);
  if (parsed.source.value === null) return { values: {}, problems: [] };
  if (!isMapping(parsed.source.value)) {
    sink.warn(
      "config_not_mapping",
      null,
      `expected a mapping of settings, found ${describeValue(parsed.source.value)}; these settings are not used`,
    );
    return { values: {}, problems: sink.problems };
  }
  const raw = expandDottedKeys(sink, parsed.source.value);
  if (scope === "project") restrictProject(sink, raw);
  const r: Reader = { sink, source: parsed.source, kept: [], errorEffect: "the value is not used" };
  const values = readObject(r, raw, "", {
    schema: SettingsFileSchema,
    invalid: "warning",
    rules: rulesFor(""),
  });
  return { values, problems: sink.problems, lineOf: parsed.source.lineOf };
}

function rulesFor(field: string): Record<string, FieldRule> {
  const nested = (schema: ObjectSpec["schema"]): FieldRule => ({
    read: (r: Reader, v: unknown, f: string) =>
      readSection(r, v, f, "warning", (m) =>
        readObject(r, m, f, { schema, invalid: "warning", rules: rulesFor(f) }),
      ),
  });
  const shape = SettingsFileSchema.shape;
  if (field === "") {
    return {
      agent: nested(shape.agent.unwrap()),
      model: nested(shape.model.unwrap()),
      llm: nested(shape.llm.unwrap()),
      project: nested(shape.project.unwrap()),
      tools: nested(shape.tools.unwrap()),
    };
  }
  if (field === "model") return { profile: nested(shape.model.unwrap().shape.profile.unwrap()) };
  if (field === "llm") return { retry: nested(shape.llm.unwrap().shape.retry.unwrap()) };
  if (field === "tools") return { web_search: nested(WebSearchSchema), web_fetch: nested(WebFetchSchema) };
  return {};
}

function expandDottedKeys(sink: ProblemSink, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (!key.includes(".")) out[key] = value;
  for (const [key, value] of Object.entries(raw)) {
    if (!key.includes(".")) continue;
    const parts = key.split(".");
    let node = out;
    let clash = false;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (next === undefined || next === null) node[part] = {};
      else if (!isMapping(next)) {
        clash = true;
        break;
      }
      node = node[part] as Record<string, unknown>;
    }
    const last = parts.at(-1) as string;
    if (clash || last in node) {
      sink.warn(
        "config_key_ignored",
        key,
        `"${key}" is also written in nested form; the nested value is used`,
      );
    } else node[last] = value;
  }
  return out;
}

/** Project settings may set only `llm.retry.max_transient`; anything else is reported and removed. */
function restrictProject(sink: ProblemSink, raw: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(raw)) {
    if (key === "llm" && isMapping(value)) {
      for (const [k2, v2] of Object.entries(value)) {
        if (k2 === "retry" && isMapping(v2)) {
          for (const k3 of Object.keys(v2)) {
            if (k3 !== "max_transient") {
              sink.warn(
                "settings_not_allowed",
                `llm.retry.${k3}`,
                `project settings may set only llm.retry.max_transient; llm.retry.${k3} is ignored (set it in the user settings)`,
              );
              delete v2[k3];
            }
          }
          continue;
        }
        sink.warn(
          "settings_not_allowed",
          `llm.${k2}`,
          `project settings may set only llm.retry.max_transient; llm.${k2} is ignored (set it in the user settings)`,
        );
        delete value[k2];
      }
      continue;
    }
    sink.warn(
      "settings_not_allowed",
      key,
      `project settings may set only llm.retry.max_transient; ${key} is ignored (set it in the user settings)`,
    );
    delete raw[key];
  }
}
