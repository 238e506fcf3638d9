import type { CliErrorJson } from "../json/error";

/** One line of the `--json` error object (`CliErrorJsonSchema`), ready to write. */
export function errorJsonLine(error: CliErrorJson["error"]): string {
  return `${JSON.stringify({ error })}\n`;
}
