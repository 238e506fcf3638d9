import { z } from "zod";

// The script of the ACP agent double: what it answers to the handshake and the session requests, and the
// steps of each prompt turn. One JSON document, written by tests (see `writeAgentScript`).

const Text = z.union([z.string(), z.array(z.string()).min(1)]);
const ToolKindSchema = z.enum([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "switch_mode",
  "other",
]);
const ToolStatusSchema = z.enum(["pending", "in_progress", "completed", "failed"]);
const JsonObject = z.record(z.string(), z.json());

/** A tool call reported to the client (`tool_call`), then each of `updates` (`tool_call_update`). */
const ToolCallStepSchema = z.strictObject({
  id: z.string().min(1).optional(),
  title: z.string(),
  kind: ToolKindSchema.default("other"),
  status: ToolStatusSchema.default("pending"),
  rawInput: z.json().optional(),
  content: z.string().optional(),
  locations: z
    .array(z.strictObject({ path: z.string(), line: z.number().int().min(0).optional() }))
    .optional(),
  updates: z
    .array(
      z.strictObject({
        status: ToolStatusSchema.optional(),
        title: z.string().optional(),
        content: z.string().optional(),
        rawOutput: z.json().optional(),
      }),
    )
    .default([]),
});

const PermissionOptionSchema = z.strictObject({
  optionId: z.string().min(1),
  name: z.string(),
  kind: z.enum(["allow_once", "allow_always", "reject_once", "reject_always"]),
});

/** `session/request_permission`; without `toolCallId` it asks about the turn's last tool call, or a new one. */
const PermissionStepSchema = z.strictObject({
  toolCallId: z.string().min(1).optional(),
  title: z.string().default("Allow the scripted action?"),
  kind: ToolKindSchema.default("other"),
  options: z
    .array(PermissionOptionSchema)
    .min(1)
    .default([
      { optionId: "allow", name: "Allow", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]),
});

/** Token counts and cost of one model call: a `usage_update`, and summed into the turn's `usage`. */
const UsageStepSchema = z.strictObject({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  cachedReadTokens: z.number().int().min(0).optional(),
  cachedWriteTokens: z.number().int().min(0).optional(),
  thoughtTokens: z.number().int().min(0).optional(),
  /** Tokens in context for `usage_update.used`; by default input + output + cached reads. */
  used: z.number().int().min(0).optional(),
  size: z.number().int().min(1).default(200_000),
  cost: z.strictObject({ amount: z.number().min(0), currency: z.string().default("USD") }).optional(),
});

/** The step kinds; a step is an object with exactly one of these keys (and the branches its kind allows). */
export const STEP_KINDS = [
  "message",
  "thought",
  "plan",
  "toolCall",
  "permission",
  "writeFile",
  "readFile",
  "mcpCall",
  "submitHandoff",
  "reportBlocked",
  "finalJson",
  "usage",
  "stderr",
  "delay",
  "stop",
  "crash",
  "hang",
  "echoPrompt",
  "echoSession",
  "echoTurn",
  "empty",
  "error",
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

const BRANCHES_OF: Partial<Record<StepKind, readonly string[]>> = {
  permission: ["onAllowed", "onRejected", "onCancelled"],
  writeFile: ["onOk", "onError"],
  readFile: ["onOk", "onError"],
  mcpCall: ["onOk", "onError"],
  submitHandoff: ["onOk", "onError"],
  reportBlocked: ["onOk", "onError"],
};
const BRANCH_KEYS = ["onAllowed", "onRejected", "onCancelled", "onOk", "onError"] as const;

const StepObjectSchema = z.strictObject({
  /** An agent message: one chunk, or one chunk per string. */
  message: Text.optional(),
  /** An agent thought: one chunk, or one chunk per string. */
  thought: Text.optional(),
  plan: z
    .array(
      z.strictObject({
        content: z.string(),
        priority: z.enum(["high", "medium", "low"]).default("medium"),
        status: z.enum(["pending", "in_progress", "completed"]).default("pending"),
      }),
    )
    .optional(),
  toolCall: ToolCallStepSchema.optional(),
  permission: PermissionStepSchema.optional(),
  /** `fs/write_text_file` to the client (a relative path is taken from the session's cwd). */
  writeFile: z.strictObject({ path: z.string().min(1), content: z.string() }).optional(),
  /** `fs/read_text_file` to the client; the text read becomes an agent message. */
  readFile: z
    .strictObject({
      path: z.string().min(1),
      line: z.number().int().min(1).optional(),
      limit: z.number().int().min(1).optional(),
    })
    .optional(),
  /** A tool call to an MCP server of `session/new` (by name, else the first that offers the tool). */
  mcpCall: z
    .strictObject({
      server: z.string().optional(),
      tool: z.string().min(1),
      arguments: JsonObject.default({}),
    })
    .optional(),
  /** Calls the MCP tool `submit_handoff` with this object, on whichever server offers it. */
  submitHandoff: JsonObject.optional(),
  /** Calls the MCP tool `report_blocked` with `{ reason }`, on whichever server offers it. */
  reportBlocked: z.strictObject({ reason: z.string() }).optional(),
  /** Ends the turn (`end_turn`) with a message holding this JSON value. */
  finalJson: z.json().optional(),
  usage: UsageStepSchema.optional(),
  /** Text written to the agent's stderr as is. */
  stderr: z.string().optional(),
  /** Waits this many milliseconds; `session/cancel` ends the wait and the turn. */
  delay: z.number().int().min(0).optional(),
  /** Ends the turn with this stop reason (a turn that runs out of steps ends with `end_turn`). */
  stop: z.enum(["end_turn", "max_tokens", "max_turn_requests", "refusal"]).optional(),
  /** Exits the process mid-turn with this exit code, or kills it with this signal. */
  crash: z
    .union([z.number().int().min(0).max(255), z.enum(["SIGKILL", "SIGTERM", "SIGSEGV", "SIGABRT"])])
    .optional(),
  /** Never answers the prompt; `session/cancel` ends it with `cancelled` unless `ignoreCancel`. */
  hang: z.union([z.literal(true), z.strictObject({ ignoreCancel: z.boolean().default(false) })]).optional(),
  /** An agent message holding the text of the prompt received. */
  echoPrompt: z.literal(true).optional(),
  /** An agent message holding the session's JSON: id, cwd, MCP server names, mode, model, config values. */
  echoSession: z.literal(true).optional(),
  /** An agent message holding `{ sessionId, turn }`: the session's id and this prompt's 0-based index in it. */
  echoTurn: z.literal(true).optional(),
  /** Ends the turn (`end_turn`) at once, with no message. */
  empty: z.literal(true).optional(),
  /** Answers the prompt with this JSON-RPC error instead of a stop reason. */
  error: z.strictObject({ code: z.number().int().default(-32603), message: z.string() }).optional(),
  get onAllowed() {
    return z.array(StepSchema).optional();
  },
  get onRejected() {
    return z.array(StepSchema).optional();
  },
  get onCancelled() {
    return z.array(StepSchema).optional();
  },
  get onOk() {
    return z.array(StepSchema).optional();
  },
  get onError() {
    return z.array(StepSchema).optional();
  },
});

/** One step of a turn: exactly one step key, e.g. `{ "message": "ok" }` or `{ "permission": {}, "onRejected": [...] }`. */
export const StepSchema = StepObjectSchema.superRefine((step, ctx) => {
  const kinds = STEP_KINDS.filter((kind) => step[kind] !== undefined);
  if (kinds.length !== 1) {
    ctx.addIssue({
      code: "custom",
      message:
        kinds.length === 0
          ? `a step needs one of the keys ${STEP_KINDS.join(", ")}`
          : `a step has exactly one kind, found ${kinds.join(" and ")}; split it into ${kinds.length} steps`,
    });
    return;
  }
  const kind = kinds[0]!;
  for (const branch of BRANCH_KEYS) {
    if (step[branch] !== undefined && !(BRANCHES_OF[kind] ?? []).includes(branch)) {
      ctx.addIssue({
        code: "custom",
        path: [branch],
        message: `a ${kind} step has no ${branch} branch${BRANCHES_OF[kind] ? `; it has ${BRANCHES_OF[kind].join(", ")}` : ""}`,
      });
    }
  }
});
export type Step = z.infer<typeof StepSchema>;
export type StepInput = z.input<typeof StepSchema>;

/** The kind of a parsed step: its one step key. */
export function stepKind(step: Step): StepKind {
  return STEP_KINDS.find((kind) => step[kind] !== undefined)!;
}

/** Picks a turn by the prompt instead of by order: the text contains `promptIncludes`, the session's n-th prompt is `turn`. */
const WhenSchema = z
  .strictObject({ promptIncludes: z.string().min(1).optional(), turn: z.number().int().min(0).optional() })
  .refine((when) => when.promptIncludes !== undefined || when.turn !== undefined, {
    message: "when needs promptIncludes or turn",
  });

export const TurnSchema = z.strictObject({ when: WhenSchema.optional(), steps: z.array(StepSchema) });
export type Turn = z.infer<typeof TurnSchema>;

const NamedSchema = z.strictObject({
  id: z.string().min(1),
  name: z.string(),
  description: z.string().optional(),
});

const ConfigOptionSchema = z.strictObject({
  id: z.string().min(1),
  name: z.string(),
  description: z.string().optional(),
  category: z.string().optional(),
  currentValue: z.string(),
  options: z
    .array(z.strictObject({ value: z.string(), name: z.string(), description: z.string().optional() }))
    .min(1),
  /** Every `session/set_config_option` of this option fails with invalid-params. */
  reject: z.boolean().default(false),
});

const ModelsSchema = z.strictObject({
  /**
   * How the client switches models: `config_option` (a `category: "model"` option named `model`, set with
   * `session/set_config_option`), `set_model` (legacy `session/set_model`, with `models` in the
   * `session/new` answer), `none` (neither method exists).
   */
  via: z.enum(["config_option", "set_model", "none"]),
  available: z
    .array(
      z.union([
        z.string().min(1),
        z.strictObject({
          id: z.string().min(1),
          name: z.string().optional(),
          description: z.string().optional(),
        }),
      ]),
    )
    .min(1),
  /** The model a session starts with; the first available one by default. */
  current: z.string().optional(),
  /** With `via: "set_model"`: every `session/set_model` fails, known model or not. */
  rejectSetModel: z.boolean().default(false),
});

export const AcpDoubleScriptSchema = z
  .strictObject({
    /** A label for the log. */
    name: z.string().optional(),
    agentInfo: z
      .strictObject({ name: z.string(), version: z.string(), title: z.string().optional() })
      .default({ name: "acp-agent-double", version: "0.1.0" }),
    /** The protocol version `initialize` answers; the SDK's `PROTOCOL_VERSION` by default. */
    protocolVersion: z.number().int().min(0).optional(),
    /** Delays the answers to `initialize`, `authenticate`, `session/new` and `session/load`. */
    handshakeDelayMs: z.number().int().min(0).default(0),
    /** Offers these `authMethods`; `session/new` and `session/load` fail with auth-required until `authenticate`. */
    auth: z.strictObject({ methods: z.array(NamedSchema).min(1) }).optional(),
    /** `session/load`: not offered, sessions of this process only, or any session id (a fresh one when unknown). */
    loadSession: z.enum(["off", "known", "any"]).default("known"),
    promptCapabilities: z
      .strictObject({
        image: z.boolean().default(false),
        audio: z.boolean().default(false),
        embeddedContext: z.boolean().default(true),
      })
      .default({ image: false, audio: false, embeddedContext: true }),
    mcpCapabilities: z
      .strictObject({ http: z.boolean().default(true), sse: z.boolean().default(true) })
      .default({ http: true, sse: true }),
    modes: z
      .strictObject({
        current: z.string().optional(),
        available: z.array(NamedSchema).min(1),
        /** Mode ids that `session/set_mode` refuses (invalid-params), though they are listed. */
        reject: z.array(z.string()).default([]),
      })
      .optional(),
    configOptions: z.array(ConfigOptionSchema).default([]),
    models: ModelsSchema.optional(),
    /** Turns in order (those without `when`), and turns picked by their `when`. */
    turns: z.array(TurnSchema).default([]),
    /** The turn for prompts past the last ordered turn; without it the last ordered turn repeats. */
    defaultTurn: TurnSchema.optional(),
  })
  .superRefine((script, ctx) => {
    if (script.turns.length === 0 && script.defaultTurn === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["turns"],
        message: "a script needs at least one turn or a defaultTurn",
      });
    }
    const modes = script.modes;
    if (modes?.current !== undefined && !modes.available.some((m) => m.id === modes.current)) {
      ctx.addIssue({
        code: "custom",
        path: ["modes", "current"],
        message: `mode ${modes.current} is not available`,
      });
    }
    const models = script.models;
    const modelIds = models?.available.map((m) => (typeof m === "string" ? m : m.id)) ?? [];
    if (models?.current !== undefined && !modelIds.includes(models.current)) {
      ctx.addIssue({
        code: "custom",
        path: ["models", "current"],
        message: `model ${models.current} is not available`,
      });
    }
    const ids = new Set<string>();
    script.configOptions.forEach((option, index) => {
      if (ids.has(option.id) || (option.id === "model" && models?.via === "config_option")) {
        ctx.addIssue({
          code: "custom",
          path: ["configOptions", index, "id"],
          message: `config option ${option.id} is given twice (models via config_option adds "model")`,
        });
      }
      ids.add(option.id);
      if (!option.options.some((o) => o.value === option.currentValue)) {
        ctx.addIssue({
          code: "custom",
          path: ["configOptions", index, "currentValue"],
          message: `${option.currentValue} is not one of the option's values`,
        });
      }
    });
  });
export type AcpDoubleScript = z.infer<typeof AcpDoubleScriptSchema>;
export type AcpDoubleScriptInput = z.input<typeof AcpDoubleScriptSchema>;

/** The turn for a session's `promptIndex`-th prompt, of which `ordered` took an ordered turn; see `TurnSchema`. */
export function selectTurn(
  script: AcpDoubleScript,
  promptIndex: number,
  ordered: number,
  promptText: string,
): { turn: Turn; ordered: boolean } | undefined {
  const picked = script.turns.find(
    (t) =>
      t.when !== undefined &&
      (t.when.turn === undefined || t.when.turn === promptIndex) &&
      (t.when.promptIncludes === undefined || promptText.includes(t.when.promptIncludes)),
  );
  if (picked) return { turn: picked, ordered: false };
  const sequence = script.turns.filter((t) => t.when === undefined);
  const next = sequence[ordered];
  if (next) return { turn: next, ordered: true };
  if (script.defaultTurn) return { turn: script.defaultTurn, ordered: false };
  const last = sequence.at(-1);
  return last ? { turn: last, ordered: false } : undefined;
}
