import { readFileSync } from "node:fs";
import type { z } from "zod";
import { describeCause, recordsError } from "./codes";

/**
 * Reads and checks a JSON record file. A missing file returns `null` when `optional`; anything else that
 * goes wrong throws `record_invalid` naming the file and the first problem.
 */
export function readJsonFile<S extends z.ZodType>(
  path: string,
  schema: S,
  what: string,
  options: { optional: true },
): z.infer<S> | null;
export function readJsonFile<S extends z.ZodType>(path: string, schema: S, what: string): z.infer<S>;
export function readJsonFile<S extends z.ZodType>(
  path: string,
  schema: S,
  what: string,
  options: { optional?: boolean } = {},
): z.infer<S> | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    if (options.optional && (cause as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw recordsError("record_invalid", `Could not read ${what} at ${path}: ${describeCause(cause)}.`, {
      cause,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw recordsError("record_invalid", `${what} at ${path} is not valid JSON: ${describeCause(cause)}.`, {
      hint: "The file was damaged or edited by hand; restore it or remove the folder that holds it.",
      cause,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    throw recordsError(
      "record_invalid",
      `${what} at ${path} does not have the expected shape: ${where}: ${issue?.message ?? "invalid"}.`,
      { hint: "The file was damaged, edited by hand or written by an incompatible version." },
    );
  }
  return parsed.data;
}
