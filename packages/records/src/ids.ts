import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";

/** Session IDs are lowercase UUID v4 strings (clarification 21). */
export const SessionIdSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, "a lowercase UUID v4");
/** Run IDs are 32 lowercase hex characters (clarification 21). */
export const RunIdSchema = z.string().regex(/^[0-9a-f]{32}$/, "32 lowercase hex characters");

export function newSessionId(): string {
  return randomUUID().toLowerCase();
}

export function newRunId(): string {
  return randomBytes(16).toString("hex");
}

export function isSessionId(value: string): boolean {
  return SessionIdSchema.safeParse(value).success;
}

export function isRunId(value: string): boolean {
  return RunIdSchema.safeParse(value).success;
}
