import { z } from "zod";

/** An environment variable name: `[A-Za-z_][A-Za-z0-9_]*`. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/u;

/** A string or a list of strings joined with `\n` (`instructions`). */
export const TextOrLinesSchema = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (typeof value === "string" ? value : value.join("\n")));

/** A string with no NUL character (values handed to a child process). */
export const NoNulStringSchema = z.string().refine((s) => !s.includes("\u0000"), "must not contain NUL");

/** Written into the JSON Schema for keys the original writes without documenting; they have no effect. */
export const AcceptedNoEffectSchema = z
  .unknown()
  .optional()
  .meta({ description: "Accepted for compatibility with the original product; has no effect." });

/** Parses JSON object text; null when it is not a JSON object (`"[1]"`, `"x"`, `"null"`). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/**
 * A JSON object written as text (the original's form) or as a YAML mapping (ours). The reader turns the text
 * form into a mapping, reporting text that is not a JSON object, before this schema runs.
 */
export function jsonObjectOrMapping<V extends z.ZodType>(values: V) {
  return z
    .union([z.string(), z.record(z.string(), values)])
    .transform(
      (value) =>
        (typeof value === "string" ? (parseJsonObject(value) ?? {}) : value) as Record<string, z.output<V>>,
    );
}
