import { type ConfigProblem, describeValue, ProblemSink } from "../problems";
import { profileNameProblem } from "../profile-name";
import {
  ACP_RESERVED_ENV,
  AcpSchema,
  AgentProfileFileSchema,
  type AgentProfileSettings,
  APPROVAL_LEVELS,
  ApprovalSchema,
  CompactionFieldsSchema,
  InlineSkillSchema,
  MemorySchema,
  ModelBindingSchema,
  OBSOLETE_COMPACTION_KEYS,
  SHELL_FILTER_PRESETS,
  ShellFilterFieldsSchema,
  SkillsSchema,
  SubAgentEntrySchema,
  SubAgentsSchema,
  ToolsSchema,
} from "../schema/agent-profile";
import { ENV_NAME } from "../schema/common";
import { WebFetchSchema, WebSearchSchema } from "../schema/web-tools";
import { isBuiltinToolKind } from "../tool-kinds";
import { childPath, parseYaml } from "../yaml-source";
import {
  DROP,
  isMapping,
  type Kept,
  type Reader,
  readList,
  readObject,
  readSection,
  warnLiteralTemplates,
} from "./fields";
import { readMcpList } from "./mcp-servers";

/** One agent profile file, read: the settings, or null when a load error skips it. */
export interface AgentFileRead {
  /** The trimmed `name` when it could be read, even if the profile is skipped. */
  name: string | null;
  /** The `id` as written (trimmed), or null when not set. */
  id: string | null;
  settings: AgentProfileSettings | null;
  /** What a canonical rewrite writes (without `id`), or null when the profile is skipped. */
  canonical: { accepted: Record<string, unknown>; kept: Kept[] } | null;
  problems: ConfigProblem[];
  /** The line of a field in the file (for problems found later, when loading), when the file was YAML. */
  lineOf?: (field: string) => number | null;
}

/** Sections an `acp` section resets, in the reference's order. */
export const ACP_RESET_SECTIONS = [
  "instructions",
  "tools",
  "skills",
  "memory",
  "compaction",
  "approval",
] as const;

/**
 * Reads an agent profile from YAML text, applying the reference's load-error and warning rules field by
 * field (agent-profiles.md section 2). Never throws for bad input.
 */
export function readAgentProfile(text: string, file: string | null): AgentFileRead {
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const sink = new ProblemSink(file);
    sink.add(
      "config_not_yaml",
      "error",
      null,
      `not valid YAML: ${parsed.message}; the profile is not loaded`,
      parsed.line,
    );
    return { name: null, id: null, settings: null, canonical: null, problems: sink.problems };
  }
  const { source } = parsed;
  const sink = new ProblemSink(file, source.lineOf);
  const raw = source.value;
  if (!isMapping(raw)) {
    sink.error(
      "config_not_mapping",
      null,
      `expected a mapping of profile fields (name: …), found ${describeValue(raw)}; the profile is not loaded`,
    );
    return { name: null, id: null, settings: null, canonical: null, problems: sink.problems };
  }
  const r: Reader = { sink, source, kept: [], errorEffect: "the profile is not loaded" };
  const isAcp = Object.hasOwn(raw, "acp");
  const name = typeof raw["name"] === "string" ? raw["name"].trim() : null;

  if (isAcp) {
    for (const section of ACP_RESET_SECTIONS) {
      if (raw[section] !== undefined && raw[section] !== null) {
        sink.warn(
          "profile_acp_section_reset",
          section,
          `an ACP agent chooses its own ${section}; this section is ignored (remove it, or remove acp to make a native agent)`,
        );
      }
    }
    if (raw["sub_agent_only"] === false) {
      sink.warn(
        "config_key_ignored",
        "sub_agent_only",
        "ACP agents are always sub-agent-only; sub_agent_only: false is ignored",
      );
    }
  }

  const accepted = readObject(r, raw, "", {
    schema: AgentProfileFileSchema,
    invalid: "warning",
    silent: ["metadata"],
    skip: isAcp ? ACP_RESET_SECTIONS : [],
    rules: {
      name: { read: readName, invalid: "error" },
      id: { read: readId },
      sub_agent_only: { invalid: "error" },
      instructions: { expected: "a string or a list of strings" },
      model: {
        read: (r2, v, f) => readSection(r2, v, f, "warning", (m) => readModelBinding(r2, m, f, isAcp)),
      },
      tools: { read: (r2, v, f) => readSection(r2, v, f, "warning", (m) => readTools(r2, m, f)) },
      approval: { read: (r2, v, f) => readSection(r2, v, f, "error", (m) => readApproval(r2, m, f)) },
      skills: { read: (r2, v, f) => readSection(r2, v, f, "warning", (m) => readSkills(r2, m, f)) },
      memory: {
        read: (r2, v, f) =>
          readSection(r2, v, f, "warning", (m) =>
            readObject(r2, m, f, { schema: MemorySchema, invalid: "warning" }),
          ),
      },
      compaction: { read: (r2, v, f) => readSection(r2, v, f, "warning", (m) => readCompaction(r2, m, f)) },
      sub_agents: {
        read: (r2, v, f) => readSection(r2, v, f, "warning", (m) => readSubAgents(r2, m, f, name, isAcp)),
      },
      acp: { read: readAcp },
    },
  });

  const id = typeof accepted["id"] === "string" ? accepted["id"].trim() : null;
  if (sink.failed)
    return { name, id, settings: null, canonical: null, problems: sink.problems, lineOf: source.lineOf };
  const result = AgentProfileFileSchema.safeParse(accepted);
  if (!result.success) {
    // Every field passed its own check, so this is a bug in the reader's table, not in the file.
    sink.error(
      "config_field_invalid",
      null,
      `internal: the profile passed every field check but not the schema (${result.error.message}); the profile is not loaded`,
    );
    return { name, id, settings: null, canonical: null, problems: sink.problems };
  }
  const settings = result.data;
  if (isAcp) settings.sub_agent_only = true;
  return {
    name,
    id,
    settings,
    canonical: { accepted, kept: r.kept },
    problems: sink.problems,
    lineOf: source.lineOf,
  };
}

function readName(r: Reader, value: unknown, field: string): unknown {
  if (typeof value !== "string") {
    const hint =
      typeof value === "number" || typeof value === "boolean" ? ` Quote it: name: "${String(value)}".` : "";
    r.sink.error(
      "config_field_invalid",
      field,
      `name must be a string, found ${describeValue(value)}; ${r.errorEffect}.${hint}`,
    );
    return DROP;
  }
  const problem = profileNameProblem(value.trim());
  if (problem !== null) {
    r.sink.error(
      "config_field_invalid",
      field,
      `name ${JSON.stringify(value.trim())} cannot be used: ${problem}; ${r.errorEffect}. The name becomes the file name <name>.yaml, so it must be portable.`,
    );
    return DROP;
  }
  return value;
}

function readId(r: Reader, value: unknown, field: string): unknown {
  if (value === null) return DROP;
  if (typeof value !== "string") {
    r.sink.error(
      "config_field_invalid",
      field,
      `id must be a YAML string, found ${describeValue(value)}; ${r.errorEffect}. Quote it: id: "${String(value)}", or remove it to have one assigned.`,
    );
    return DROP;
  }
  return value.trim() === "" ? DROP : value;
}

function readModelBinding(r: Reader, m: Record<string, unknown>, field: string, isAcp: boolean): unknown {
  const out = readObject(r, m, field, {
    schema: ModelBindingSchema,
    invalid: "warning",
    ignored: {
      profile:
        "model.profile (a model name) is a legacy key and is ignored; bind a model by id with model.profile_id",
    },
  });
  if (isAcp && typeof out["profile_id"] === "string" && out["profile_id"].trim() !== "") {
    r.sink.warn(
      "profile_acp_section_reset",
      childPath(field, "profile_id"),
      "an ACP agent chooses its own model; model.profile_id is ignored (use acp.model_id to request one)",
    );
    delete out["profile_id"];
  }
  return out;
}

function readTools(r: Reader, m: Record<string, unknown>, field: string): unknown {
  return readObject(r, m, field, {
    schema: ToolsSchema,
    invalid: "warning",
    silent: ["custom"],
    rules: {
      builtins: { read: readBuiltins },
      mcp: { read: readMcpList },
      shell_filter: { read: readShellFilter },
      web_search: {
        read: (r2, v, f) =>
          readSection(r2, v, f, "error", (w) =>
            readObject(r2, w, f, { schema: WebSearchSchema, invalid: "error" }),
          ),
      },
      web_fetch: {
        read: (r2, v, f) =>
          readSection(r2, v, f, "error", (w) =>
            readObject(r2, w, f, { schema: WebFetchSchema, invalid: "error" }),
          ),
      },
    },
  });
}

function readBuiltins(r: Reader, value: unknown, field: string): unknown {
  if (value === null) return DROP;
  if (!Array.isArray(value)) {
    r.sink.warn(
      "config_field_invalid",
      field,
      `expected a list of tool kinds, found ${describeValue(value)}; using the default []`,
    );
    return DROP;
  }
  const known: string[] = [];
  const warned = new Set<string>();
  const all: string[] = [];
  value.forEach((item, index) => {
    const at = childPath(field, index);
    if (typeof item !== "string") {
      r.sink.warn(
        "config_field_invalid",
        at,
        `expected a tool kind name, found ${describeValue(item)}; the item is dropped`,
      );
      return;
    }
    all.push(item);
    if (isBuiltinToolKind(item)) {
      if (!known.includes(item)) known.push(item);
    } else if (!warned.has(item)) {
      warned.add(item);
      r.sink.warn(
        "config_field_invalid",
        at,
        `"${item}" is not a built-in tool kind this engine provides (shell, filesystem.read, filesystem.write, search, web_search, web_fetch, ask_user, sleep, doc_converter, todo); it gives no tool`,
      );
    }
  });
  // Unknown kinds give no tool but stay in the file when it is rewritten.
  if (warned.size > 0) r.kept.push({ path: field.split("."), value: all });
  return known;
}

function readShellFilter(r: Reader, value: unknown, field: string): unknown {
  if (value === null) return DROP;
  if (typeof value === "string") {
    if (!(SHELL_FILTER_PRESETS as readonly string[]).includes(value)) {
      r.sink.warn(
        "config_field_invalid",
        field,
        `unknown preset "${value}" (expected read_only or unrestricted); shell commands are not filtered`,
      );
    }
    return value;
  }
  if (!isMapping(value)) {
    r.sink.warn(
      "config_field_invalid",
      field,
      `expected a preset name or a mapping, found ${describeValue(value)}; shell commands are not filtered`,
    );
    return DROP;
  }
  return readObject(r, value, field, {
    schema: ShellFilterFieldsSchema,
    invalid: "warning",
    rules: {
      preset: {
        read: (r2, v, f) => {
          if (v === null || v === "" || (SHELL_FILTER_PRESETS as readonly string[]).includes(v as string))
            return v ?? DROP;
          r2.sink.warn(
            "config_field_invalid",
            f,
            `unknown preset ${describeValue(v)} (expected read_only or unrestricted); the custom fields apply`,
          );
          return DROP;
        },
      },
    },
  });
}

function readApproval(r: Reader, m: Record<string, unknown>, field: string): unknown {
  return readObject(r, m, field, {
    schema: ApprovalSchema,
    invalid: "error",
    silent: ["user_can_override"],
    rules: {
      default: { expected: `one of ${APPROVAL_LEVELS.join(", ")} (exactly; YAML booleans are not levels)` },
      overrides: {
        read: (r2, v, f) =>
          readSection(r2, v, f, "error", (o) => {
            const out: Record<string, string> = {};
            for (const [key, level] of Object.entries(o)) {
              const at = childPath(f, key);
              if (r2.source.keyNotString(at) || key.trim() === "") {
                r2.sink.error(
                  "config_field_invalid",
                  at,
                  `override keys must be non-empty strings (a tool kind, a tool name or kind.name), found ${JSON.stringify(key)}; ${r2.errorEffect}`,
                );
              } else if (
                typeof level !== "string" ||
                !(APPROVAL_LEVELS as readonly string[]).includes(level)
              ) {
                r2.sink.error(
                  "config_field_invalid",
                  at,
                  `expected one of ${APPROVAL_LEVELS.join(", ")}, found ${describeValue(level)}; ${r2.errorEffect}`,
                );
              } else out[key] = level;
            }
            return out;
          }),
      },
    },
  });
}

function readSkills(r: Reader, m: Record<string, unknown>, field: string): unknown {
  return readObject(r, m, field, {
    schema: SkillsSchema,
    invalid: "warning",
    rules: {
      inline: {
        read: (r2, v, f) => {
          const names = new Set<string>();
          return readList(r2, v, f, "error", (item, at) => {
            const skill = readObject(r2, item, at, {
              schema: InlineSkillSchema,
              invalid: "error",
              rules: { instructions: { expected: "a string or a list of strings" } },
            });
            const n = skill["name"];
            if (typeof n === "string" && names.has(n)) {
              r2.sink.warn(
                "config_field_invalid",
                childPath(at, "name"),
                `an earlier inline skill is already named "${n}"; the first one wins and this one is ignored`,
              );
              return DROP;
            }
            if (typeof n === "string") names.add(n);
            return skill;
          });
        },
      },
    },
  });
}

function readCompaction(r: Reader, m: Record<string, unknown>, field: string): unknown {
  const obsolete = (key: string) => ({
    read: (r2: Reader, v: unknown, f: string): unknown => {
      const off = key === "reserved_context_pct" && typeof v === "number" && v >= 1;
      r2.sink.warn(
        "config_key_ignored",
        f,
        `${key} is obsolete and ignored${off ? "; because it is 1 or more, compaction is turned off for this profile" : ""}. Compaction now starts from the model's context window.`,
      );
      return typeof v === "number" ? v : DROP;
    },
  });
  return readObject(r, m, field, {
    schema: CompactionFieldsSchema,
    invalid: "warning",
    rules: {
      last_words_template: { invalid: "error" },
      phase4_side_call_token_budget: { invalid: "error" },
      ...Object.fromEntries(OBSOLETE_COMPACTION_KEYS.map((k) => [k, obsolete(k)])),
    },
  });
}

function readSubAgents(
  r: Reader,
  m: Record<string, unknown>,
  field: string,
  self: string | null,
  isAcp: boolean,
): unknown {
  const concurrency = (r2: Reader, v: unknown, f: string): unknown => {
    if (v === null) return DROP;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      r2.sink.warn(
        "config_field_invalid",
        f,
        `expected an integer, found ${describeValue(v)}; using the default 3`,
      );
      return DROP;
    }
    if (v <= 0)
      r2.sink.warn(
        "config_field_invalid",
        f,
        `a concurrency of ${v} makes every call to the affected sub-agents fail; use a positive number`,
      );
    return v;
  };
  const out = readObject(r, m, field, {
    schema: SubAgentsSchema,
    invalid: "warning",
    rules: {
      max_total_concurrency: { read: concurrency },
      agents: {
        read: (r2, v, f) => {
          const used = new Set<string>();
          const tools = new Set<string>();
          return readList(r2, v, f, "warning", (item, at) => {
            if (typeof item["profile"] !== "string" || item["profile"].trim() === "") {
              r2.sink.warn(
                "config_field_invalid",
                childPath(at, "profile"),
                `a sub-agent entry needs profile, the name of a loaded profile; found ${describeValue(item["profile"])}; the entry is ignored`,
              );
              return DROP;
            }
            const entry = readObject(r2, item, at, {
              schema: SubAgentEntrySchema,
              invalid: "warning",
              rules: { max_concurrency: { read: concurrency } },
            });
            const profile = (entry["profile"] as string).trim();
            const tool = typeof entry["tool_name"] === "string" ? entry["tool_name"] : profile;
            if (profile === self) {
              r2.sink.warn(
                "config_field_invalid",
                childPath(at, "profile"),
                `a profile cannot call itself as a sub-agent; the entry is ignored`,
              );
              return DROP;
            }
            if (used.has(profile)) {
              r2.sink.warn(
                "config_field_invalid",
                childPath(at, "profile"),
                `"${profile}" is already listed; the entry is ignored`,
              );
              return DROP;
            }
            if (tools.has(tool)) {
              r2.sink.warn(
                "config_field_invalid",
                childPath(at, "tool_name"),
                `the tool name "${tool}" is already used by another sub-agent of this profile; the entry is ignored (set a different tool_name)`,
              );
              return DROP;
            }
            used.add(profile);
            tools.add(tool);
            return entry;
          });
        },
      },
    },
  });
  if (isAcp && Array.isArray(out["agents"]) && out["agents"].length > 0) {
    r.sink.warn(
      "profile_acp_section_reset",
      childPath(field, "agents"),
      "an ACP agent runs its own tools and cannot call sub-agents; sub_agents.agents is ignored",
    );
    delete out["agents"];
  }
  return out;
}

function readAcp(r: Reader, value: unknown, field: string): unknown {
  if (value === null) return {};
  if (!isMapping(value)) {
    r.sink.error(
      "config_field_invalid",
      field,
      `expected a mapping (or an empty acp:), found ${describeValue(value)}; ${r.errorEffect}`,
    );
    return DROP;
  }
  const acp = readObject(r, value, field, {
    schema: AcpSchema,
    invalid: "error",
    rules: {
      handshake_timeout_seconds: { invalid: "warning", expected: "a number of seconds above 0" },
      idle_timeout_seconds: { invalid: "warning", expected: "a number of seconds, 0 or more (0: no limit)" },
      env: { read: readAcpEnv },
    },
  });
  for (const key of ["session_mode", "model_id"]) {
    warnLiteralTemplates(r, acp[key], childPath(field, key), "command, args, env values and cwd");
  }
  return acp;
}

function readAcpEnv(r: Reader, value: unknown, field: string): unknown {
  return readSection(r, value, field, "error", (env) => {
    const seen = new Map<string, string>();
    const out: Record<string, string> = {};
    for (const [key, v] of Object.entries(env)) {
      const at = childPath(field, key);
      const fail = (message: string) =>
        r.sink.error("config_field_invalid", at, `${message}; ${r.errorEffect}`);
      if (!ENV_NAME.test(key))
        fail(`"${key}" is not a variable name (letters, digits and _, not starting with a digit)`);
      else if (key.toUpperCase() === ACP_RESERVED_ENV)
        fail(`${ACP_RESERVED_ENV} is set by the engine and cannot be configured`);
      else if (seen.has(key.toUpperCase()))
        fail(`"${key}" repeats "${seen.get(key.toUpperCase())}" (names are compared ignoring case)`);
      else if (typeof v !== "string")
        fail(`expected a string value, found ${describeValue(v)}; quote it: ${key}: "${String(v)}"`);
      else if (v.includes("\u0000")) fail("the value contains NUL");
      else {
        seen.set(key.toUpperCase(), key);
        out[key] = v;
      }
    }
    return out;
  });
}
