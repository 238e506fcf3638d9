import { parseArgs } from "node:util";
import { WorkflowError } from "@icode/workflow-errors";
import { z } from "zod";
import type { McpDoubleCode } from "./codes";

/** The test tools a double can serve, in the order `tools/list` shows them. */
export const TOOL_NAMES = ["echo", "add", "slow", "big", "fail", "count"] as const;
export const ToolNameSchema = z.enum(TOOL_NAMES);
export type ToolName = z.infer<typeof ToolNameSchema>;

export const DEFAULT_INSTRUCTIONS =
  "Test server of iCode. Call echo to repeat a text, add to sum two numbers, count to see how many " +
  "times count ran in this process.";

/**
 * How one MCP double behaves. `tools` picks a subset of the test tools, `prefix` is put before every tool
 * name (to make names collide with another server's), `instructions: null` serves no instructions,
 * `prompts: false` serves no prompt, `log` names a file that gets one JSON line per tool call.
 */
export const McpDoubleOptionsSchema = z.strictObject({
  name: z.string().min(1).default("mcp-double"),
  tools: z.array(ToolNameSchema).default([...TOOL_NAMES]),
  prefix: z.string().default(""),
  instructions: z.string().nullable().default(DEFAULT_INSTRUCTIONS),
  prompts: z.boolean().default(true),
  log: z.string().min(1).optional(),
});
export type McpDoubleOptions = z.infer<typeof McpDoubleOptionsSchema>;
export type McpDoubleOptionsInput = z.input<typeof McpDoubleOptionsSchema>;

export function parseMcpDoubleOptions(input: unknown): McpDoubleOptions {
  const result = McpDoubleOptionsSchema.safeParse(input);
  if (!result.success) {
    throw new WorkflowError<McpDoubleCode>(
      "options_invalid",
      `MCP double options are invalid:\n${z.prettifyError(result.error)}`,
      { hint: `tools must be a subset of ${TOOL_NAMES.join(", ")}; see McpDoubleOptionsSchema` },
    );
  }
  return result.data;
}

/** Command line flags of the stdio and HTTP executables; each has an environment variable too. */
const FLAGS = {
  name: { type: "string" },
  tools: { type: "string" },
  prefix: { type: "string" },
  instructions: { type: "string" },
  "no-instructions": { type: "boolean" },
  "no-prompts": { type: "boolean" },
  log: { type: "string" },
  port: { type: "string" },
} as const;

/**
 * Options from flags (`--name`, `--tools a,b`, `--prefix`, `--instructions`, `--no-instructions`,
 * `--no-prompts`, `--log`) over environment variables (`MCP_DOUBLE_NAME`, `MCP_DOUBLE_TOOLS`,
 * `MCP_DOUBLE_PREFIX`, `MCP_DOUBLE_INSTRUCTIONS`, `MCP_DOUBLE_LOG`). `--port` is returned apart.
 */
export function optionsFromArgv(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { options: McpDoubleOptions; port: number } {
  const { values } = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false });
  const tools = values.tools ?? env["MCP_DOUBLE_TOOLS"];
  const instructions = values["no-instructions"]
    ? null
    : (values.instructions ?? env["MCP_DOUBLE_INSTRUCTIONS"]);
  const options = parseMcpDoubleOptions({
    name: values.name ?? env["MCP_DOUBLE_NAME"],
    tools: tools === undefined ? undefined : tools.split(",").filter((t) => t !== ""),
    prefix: values.prefix ?? env["MCP_DOUBLE_PREFIX"],
    instructions,
    prompts: values["no-prompts"] ? false : undefined,
    log: values.log ?? env["MCP_DOUBLE_LOG"],
  });
  const port = Number(values.port ?? "0");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new WorkflowError<McpDoubleCode>("options_invalid", `--port ${values.port} is not a port number`, {
      hint: "give an integer from 0 (any free port) to 65535",
    });
  }
  return { options, port };
}

/** The flags that give `options` to the executables: the inverse of `optionsFromArgv`. */
export function optionsToArgv(input: McpDoubleOptionsInput = {}): string[] {
  const options = parseMcpDoubleOptions(input);
  const args = ["--name", options.name, "--tools", options.tools.join(",")];
  if (options.prefix !== "") args.push("--prefix", options.prefix);
  if (options.instructions === null) args.push("--no-instructions");
  else args.push("--instructions", options.instructions);
  if (!options.prompts) args.push("--no-prompts");
  if (options.log !== undefined) args.push("--log", options.log);
  return args;
}
