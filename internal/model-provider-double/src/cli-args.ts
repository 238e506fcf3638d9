import { parseArgs } from "node:util";
import { z } from "zod";
import { ProviderDoubleError } from "./errors";

export const CLI_USAGE = `usage: icode-provider-double [--script FILE] [--port N]

Starts the model-provider double on 127.0.0.1 and prints {"url", "openaiBaseUrl", "anthropicBaseUrl", "port",
"pid"} as one JSON line on stdout. Ends on SIGTERM or SIGINT.

  --script FILE  a JSON script: {"defaultReply"?: reply, "scripts"?: {"<model>": [reply, ...]}}
  --port N       the port to listen on; 0 (the default) picks a free one
`;

const CliArgsSchema = z.object({
  help: z.boolean(),
  script: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65_535),
});
export type CliArgs = z.infer<typeof CliArgsSchema>;

/** Parses the CLI's arguments; throws `invalid_arguments` saying what was wrong. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  let values: { script?: string | undefined; port?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        script: { type: "string" },
        port: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (cause) {
    throw new ProviderDoubleError(
      "invalid_arguments",
      cause instanceof Error ? cause.message : String(cause),
      {
        hint: CLI_USAGE,
        cause,
      },
    );
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ProviderDoubleError(
      "invalid_arguments",
      `--port must be an integer 0-65535; found "${values.port}"`,
      {
        hint: "pass --port 0 for a free port",
      },
    );
  }
  return CliArgsSchema.parse({ help: values.help === true, script: values.script, port });
}
