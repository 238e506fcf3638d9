import {
  RunDetailsSchema,
  RunLogsSchema,
  RunSummarySchema,
  SessionSummarySchema,
} from "@icode/workflow-engine";
import { z } from "zod";

/** The format version of the history commands' JSON (ours, not the reference's): bumped on a breaking change. */
export const HISTORY_JSON_VERSION = 1;
const version = z.literal(HISTORY_JSON_VERSION);

/** `icode sessions list --json`. */
export const SessionsListJsonSchema = z.strictObject({ version, sessions: z.array(SessionSummarySchema) });
export type SessionsListJson = z.infer<typeof SessionsListJsonSchema>;

/** `icode runs list --json`: newest first. */
export const RunsListJsonSchema = z.strictObject({ version, runs: z.array(RunSummarySchema) });
export type RunsListJson = z.infer<typeof RunsListJsonSchema>;

/** `icode runs show --json`: the engine's run details. */
export const RunShowJsonSchema = RunDetailsSchema.extend({ version }).strict();
export type RunShowJson = z.infer<typeof RunShowJsonSchema>;

/** `icode runs logs --json`: the engine's run logs. */
export const RunLogsJsonSchema = RunLogsSchema.extend({ version }).strict();
export type RunLogsJson = z.infer<typeof RunLogsJsonSchema>;
