import { z } from "zod";

/**
 * The parts of the agent's answers the adapter reads, checked with zod at the boundary: the ACP SDK hands
 * answers over as the agent sent them, and an agent may add fields (legacy `models`) or leave optional ones
 * out. Everything else passes through untouched.
 */

const AuthMethodSchema = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  description: z.string().nullish(),
  /** Absent or `agent`: the agent authenticates by itself; `terminal`, `env_var`: a person must act. */
  type: z.string().optional(),
});
export type AuthMethod = z.infer<typeof AuthMethodSchema>;

/**
 * The method the engine may pass to `authenticate` by itself: the first agent-type one (no `type`, or
 * `agent`), where the agent logs in with what it already has. Terminal and environment-variable methods
 * need a person, so with only those there is none.
 */
export function selfServeAuthMethod(methods: readonly AuthMethod[]): AuthMethod | null {
  return methods.find((m) => m.type === undefined || m.type === "agent") ?? null;
}

export const InitializeAnswerSchema = z.looseObject({
  protocolVersion: z.number().int(),
  agentCapabilities: z
    .looseObject({
      mcpCapabilities: z.looseObject({ http: z.boolean().optional(), sse: z.boolean().optional() }).nullish(),
    })
    .nullish(),
  authMethods: z.array(AuthMethodSchema).nullish(),
  agentInfo: z.looseObject({ name: z.string(), version: z.string().optional() }).nullish(),
});
export type InitializeAnswer = z.infer<typeof InitializeAnswerSchema>;

const SelectValueSchema = z.looseObject({ value: z.string(), name: z.string().optional() });

export const ConfigOptionSchema = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  category: z.string().nullish(),
  type: z.string(),
  currentValue: z.union([z.string(), z.boolean()]).optional(),
  /** A select's values, flat or in groups. */
  options: z
    .array(z.union([SelectValueSchema, z.looseObject({ options: z.array(SelectValueSchema) })]))
    .optional(),
});
export type ConfigOption = z.infer<typeof ConfigOptionSchema>;

/** The values a select option offers, groups flattened. */
export function selectValues(option: ConfigOption): string[] {
  return (option.options ?? []).flatMap((o): string[] =>
    typeof o.value === "string" ? [o.value] : Array.isArray(o.options) ? o.options.map((v) => v.value) : [],
  );
}

export const NewSessionAnswerSchema = z.looseObject({
  sessionId: z.string().min(1),
  modes: z
    .looseObject({
      currentModeId: z.string(),
      availableModes: z.array(z.looseObject({ id: z.string(), name: z.string().optional() })),
    })
    .nullish(),
  configOptions: z.array(ConfigOptionSchema).nullish(),
  /** The legacy model state (`session/set_model` agents), gone from the SDK's v1 schema. */
  models: z
    .looseObject({
      currentModelId: z.string().optional(),
      availableModels: z.array(z.looseObject({ modelId: z.string(), name: z.string().optional() })),
    })
    .nullish(),
});
export type NewSessionAnswer = z.infer<typeof NewSessionAnswerSchema>;

export const SetConfigAnswerSchema = z.looseObject({ configOptions: z.array(ConfigOptionSchema).nullish() });

export const UsageSchema = z.looseObject({
  totalTokens: z.number().int().min(0),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  thoughtTokens: z.number().int().min(0).nullish(),
  cachedReadTokens: z.number().int().min(0).nullish(),
  cachedWriteTokens: z.number().int().min(0).nullish(),
});

export const PromptAnswerSchema = z.looseObject({
  stopReason: z.string(),
  usage: UsageSchema.nullish(),
});

/** Parses an answer, or says what was wrong with it. */
export function parseAnswer<T>(
  schema: z.ZodType<T>,
  method: string,
  value: unknown,
): { ok: true; value: T } | { ok: false; message: string } {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    message: `the agent's answer to ${method} is malformed at ${issue?.path.join(".") || "the top"}: ${issue?.message ?? "invalid"}`,
  };
}
