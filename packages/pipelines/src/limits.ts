import { z } from "zod";

/** The reference's "Limits", with the environment variables an administrator overrides two of them with. */
export const PipelineLimitsSchema = z.object({
  /** At most this many nodes per definition (`ICODE_PIPELINE_MAX_NODES`). */
  maxNodes: z.number().int().min(1),
  /** At most this many node launches at once in a run (`ICODE_PIPELINE_MAX_PARALLEL`). */
  maxParallel: z.number().int().min(1),
  /** Above this many nodes validation gives a non-blocking notice. */
  nodeNotice: z.number().int().min(1),
  /** `task_input` is at most this many characters (code points). */
  maxTaskInput: z.number().int().min(0),
});
export type PipelineLimits = z.infer<typeof PipelineLimitsSchema>;

export const DEFAULT_PIPELINE_LIMITS: PipelineLimits = Object.freeze({
  maxNodes: 200,
  maxParallel: 10,
  nodeNotice: 64,
  maxTaskInput: 20_000,
});

export const LIMIT_ENV = {
  maxNodes: "ICODE_PIPELINE_MAX_NODES",
  maxParallel: "ICODE_PIPELINE_MAX_PARALLEL",
} as const;

/** The largest override accepted; anything above is a typo more likely than a plan. */
export const MAX_LIMIT_OVERRIDE = 100_000;

export interface LimitWarning {
  code: "pipeline_limit_override_invalid";
  variable: string;
  value: string;
  message: string;
}

/**
 * The limits in force for `env` (the engine process's environment, passed in: this never reads
 * `process.env`). An unset or empty variable keeps the default; one that is not a whole number from 1 to
 * 100000 keeps the default too, with a warning saying so.
 */
export function pipelineLimits(env: Readonly<Record<string, string | undefined>>): {
  limits: PipelineLimits;
  warnings: LimitWarning[];
} {
  const warnings: LimitWarning[] = [];
  const read = (key: keyof typeof LIMIT_ENV): number => {
    const variable = LIMIT_ENV[key];
    const fallback = DEFAULT_PIPELINE_LIMITS[key];
    const raw = env[variable];
    if (raw === undefined || raw.trim() === "") return fallback;
    const text = raw.trim();
    const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN;
    if (Number.isSafeInteger(value) && value >= 1 && value <= MAX_LIMIT_OVERRIDE) return value;
    warnings.push({
      code: "pipeline_limit_override_invalid",
      variable,
      value: raw,
      message: `${variable} is ${JSON.stringify(raw)}, expected a whole number from 1 to ${MAX_LIMIT_OVERRIDE}; using the default ${fallback}`,
    });
    return fallback;
  };
  const limits = { ...DEFAULT_PIPELINE_LIMITS, maxNodes: read("maxNodes"), maxParallel: read("maxParallel") };
  return { limits, warnings };
}
