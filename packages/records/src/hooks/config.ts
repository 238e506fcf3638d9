import { readFileSync } from "node:fs";
import { describeCause, recordsError } from "../codes";
import { hooksFile } from "../layout";
import { type HooksConfig, HooksConfigSchema } from "./schema";

/**
 * Reads `<chrysHome>/hooks.json`. A missing file means no hooks. Anything else that is wrong throws
 * `hooks_config_invalid` naming the file, the JSON path and what was expected.
 */
export function loadHooksConfig(chrysHome: string): HooksConfig {
  const path = hooksFile(chrysHome);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "ENOENT") return { hooks: [] };
    throw recordsError("hooks_config_invalid", `Could not read ${path}: ${describeCause(cause)}.`, { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw recordsError("hooks_config_invalid", `${path} is not valid JSON: ${describeCause(cause)}.`, {
      hint: 'Expected {"hooks": [{"event": "workflow_run_end", "command": ["notify-send", "done"]}]}.',
      cause,
    });
  }
  const parsed = HooksConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    throw recordsError("hooks_config_invalid", `${path}: ${where}: ${issue?.message ?? "invalid"}.`, {
      hint: "See docs/hooks.md for the format: hooks[] of {event, command, timeout_seconds, blocking, on_error}.",
    });
  }
  return parsed.data;
}
