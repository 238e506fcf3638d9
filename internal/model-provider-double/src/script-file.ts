import { readFile } from "node:fs/promises";
import { z } from "zod";
import { describeIssues, ProviderDoubleError } from "./errors";
import { DataReplySchema } from "./reply";

/**
 * A JSON script for the CLI: the default reply and the replies per route key. Replies are plain data
 * (`DataReplySchema`): a function reply cannot be written in JSON.
 *
 * @example
 * { "defaultReply": { "type": "text", "text": "ok" },
 *   "scripts": { "model-a": [{ "type": "rate_limited", "retryAfterMs": 5 }, { "type": "text", "text": "hi" }] } }
 */
export const ScriptFileSchema = z.strictObject({
  defaultReply: DataReplySchema.optional(),
  scripts: z.record(z.string(), z.array(DataReplySchema)).optional(),
});
export type ScriptFile = z.infer<typeof ScriptFileSchema>;

/** Reads and checks a script file; `path` should be absolute (the caller resolves it against its cwd). */
export async function loadScriptFile(path: string): Promise<ScriptFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new ProviderDoubleError("invalid_script_file", `cannot read the script file ${path}`, {
      hint: "pass --script with the path of a JSON file",
      cause,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new ProviderDoubleError(
      "invalid_script_file",
      `the script file ${path} is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      { hint: 'write e.g. {"scripts": {"model-a": [{"type": "text", "text": "hi"}]}}', cause },
    );
  }
  const parsed = ScriptFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ProviderDoubleError(
      "invalid_script_file",
      `the script file ${path} is not a script: ${describeIssues(parsed.error)}`,
      {
        hint: 'expected {"defaultReply"?: reply, "scripts"?: {"<model>": [reply, …]}}; see ScriptFileSchema',
      },
    );
  }
  return parsed.data;
}
