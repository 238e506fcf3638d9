import { readFileSync, writeFileSync } from "node:fs";
import { WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";
import type { AcpDoubleCode } from "./codes";
import { type AcpDoubleScript, type AcpDoubleScriptInput, AcpDoubleScriptSchema } from "./script";

/** The environment variable holding the script: a file path, or the JSON itself (starting with `{`). */
export const SCRIPT_ENV = "ACP_DOUBLE_SCRIPT";
/** The environment variable naming the agent log file. */
export const LOG_ENV = "ACP_DOUBLE_LOG";

function invalid(where: string, message: string, cause?: unknown): WorkflowError<AcpDoubleCode> {
  return new WorkflowError<AcpDoubleCode>("script_invalid", `the agent script ${where} ${message}`, {
    hint: 'a script is JSON such as {"turns": [{"steps": [{"message": "ok"}]}]}; see AcpDoubleScriptSchema',
    cause,
  });
}

/** Checks a script (parsed JSON), filling in defaults; throws `script_invalid` naming every problem. */
export function parseAgentScript(input: unknown, where = "given"): AcpDoubleScript {
  const result = AcpDoubleScriptSchema.safeParse(input);
  if (!result.success) throw invalid(where, `is invalid:\n${z.prettifyError(result.error)}`);
  return result.data;
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw invalid(where, `is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`, cause);
  }
}

/** Where the agent process found its script, for the log. */
export type ScriptSource = "flag" | "env_file" | "env_inline";

/** The script of an agent process: `--script FILE`, else `ACP_DOUBLE_SCRIPT` (a path or inline JSON). */
export function loadAgentScript(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { script: AcpDoubleScript; source: ScriptSource } {
  const flag = argv.indexOf("--script");
  if (flag !== -1) {
    const file = argv[flag + 1];
    if (file === undefined) throw invalid("flag", "--script needs a file path");
    return { script: parseAgentScript(parseJson(readText(file), file), file), source: "flag" };
  }
  const value = env[SCRIPT_ENV]?.trim();
  if (value === undefined || value === "") {
    throw invalid(
      "source",
      `is missing: pass --script FILE or set ${SCRIPT_ENV} to a path or to inline JSON`,
    );
  }
  if (value.startsWith("{")) {
    return {
      script: parseAgentScript(parseJson(value, `in ${SCRIPT_ENV}`), `in ${SCRIPT_ENV}`),
      source: "env_inline",
    };
  }
  return { script: parseAgentScript(parseJson(readText(value), value), value), source: "env_file" };
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (cause) {
    throw invalid(file, `cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`, cause);
  }
}

/** Checks `script` and writes it as JSON to `file`; returns `file`. */
export function writeAgentScript(file: string, script: AcpDoubleScriptInput): string {
  parseAgentScript(script, `for ${file}`);
  writeFileSync(file, `${JSON.stringify(script, null, 2)}\n`);
  return file;
}

/** Checks `script` and returns it as the inline JSON value of `ACP_DOUBLE_SCRIPT`. */
export function inlineAgentScript(script: AcpDoubleScriptInput): string {
  parseAgentScript(script);
  return JSON.stringify(script);
}
